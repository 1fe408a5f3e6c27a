// Invoices: line items parsed from text, per-line discounts, tax by rate category, and totals.

import { type Currency, EUR, type RoundingMode, formatMoney, parseAmount, roundMinor } from "./money.js";

export type TaxCategory = "standard" | "reduced" | "exempt";

export interface LineItem {
  description: string;
  quantity: number;
  unitPrice: number; // minor units
  category: TaxCategory;
  discountPercent: number;
}

export interface TaxRates {
  standard: number;
  reduced: number;
}

export interface Totals {
  net: number;
  tax: Record<TaxCategory, number>;
  gross: number;
}

// "3 x Coffee beans 1kg @ 12.50 [reduced] -10%"
const LINE = /^(\d+)\s*x\s+(.+?)\s+@\s+(\S+)(?:\s+\[(standard|reduced|exempt)\])?(?:\s+-(\d+(?:\.\d+)?)%)?$/;

export function parseLine(text: string, currency: Currency = EUR): LineItem {
  const match = LINE.exec(text.trim());
  if (!match) {
    throw new Error(`cannot parse line item: ${JSON.stringify(text)}`);
  }
  const [, quantity, description, price, category = "standard", discount = "0"] = match;
  const discountPercent = Number(discount);
  if (discountPercent > 100) {
    throw new RangeError(`discount over 100%: ${text}`);
  }
  return {
    description,
    quantity: Number(quantity),
    unitPrice: parseAmount(price, currency),
    category: category as TaxCategory,
    discountPercent,
  };
}

/** Parses one item per line, skipping blank lines and "#" comments. */
export function parseInvoice(text: string, currency: Currency = EUR): LineItem[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"))
    .map((line) => parseLine(line, currency));
}

/** The net amount of one line, after its discount, rounded to minor units. */
export function lineNet(item: LineItem, mode: RoundingMode = "half-up"): number {
  const gross = item.quantity * item.unitPrice;
  return roundMinor(gross * (1 - item.discountPercent / 100), mode);
}

function rateFor(category: TaxCategory, rates: TaxRates): number {
  switch (category) {
    case "standard":
      return rates.standard;
    case "reduced":
      return rates.reduced;
    case "exempt":
      return 0;
  }
}

/** Sums net per category first, then taxes each category once (rounding per category, not per line). */
export function computeTotals(items: LineItem[], rates: TaxRates, mode: RoundingMode = "half-up"): Totals {
  const netBy: Record<TaxCategory, number> = { standard: 0, reduced: 0, exempt: 0 };
  for (const item of items) {
    netBy[item.category] += lineNet(item, mode);
  }
  const tax: Record<TaxCategory, number> = { standard: 0, reduced: 0, exempt: 0 };
  for (const category of Object.keys(netBy) as TaxCategory[]) {
    tax[category] = roundMinor((netBy[category] * rateFor(category, rates)) / 100, mode);
  }
  const net = netBy.standard + netBy.reduced + netBy.exempt;
  return { net, tax, gross: net + tax.standard + tax.reduced + tax.exempt };
}

/** Applies an invoice-wide discount to the net, spreading it across categories in proportion. */
export function applyInvoiceDiscount(totals: Totals, percent: number): Totals {
  if (percent < 0 || percent > 100) {
    throw new RangeError(`invoice discount must be 0-100, got ${percent}`);
  }
  const factor = 1 - percent / 100;
  const tax: Record<TaxCategory, number> = {
    standard: roundMinor(totals.tax.standard * factor),
    reduced: roundMinor(totals.tax.reduced * factor),
    exempt: 0,
  };
  const net = roundMinor(totals.net * factor);
  return { net, tax, gross: net + tax.standard + tax.reduced };
}

/** A plain-text summary: one line per non-zero tax category, then the total. */
export function formatTotals(totals: Totals, currency: Currency = EUR): string {
  const lines = [`Net: ${formatMoney(totals.net, currency)}`];
  for (const category of ["standard", "reduced"] as const) {
    if (totals.tax[category] !== 0) {
      lines.push(`Tax (${category}): ${formatMoney(totals.tax[category], currency)}`);
    }
  }
  lines.push(`Total: ${formatMoney(totals.gross, currency)}`);
  return lines.join("\n");
}
