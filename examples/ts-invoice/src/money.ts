// Money as integer minor units (cents), so sums never drift; rounding happens once, at a named step.

export type RoundingMode = "half-up" | "half-even" | "down";

export interface Currency {
  code: string;
  symbol: string;
  minorUnits: number;
}

export const EUR: Currency = { code: "EUR", symbol: "€", minorUnits: 2 };
export const USD: Currency = { code: "USD", symbol: "$", minorUnits: 2 };
export const JPY: Currency = { code: "JPY", symbol: "¥", minorUnits: 0 };

const AMOUNT = /^(-)?(\d+)(?:\.(\d+))?$/;

/** Parses "19.99" or "-3.5" into minor units; more decimals than the currency has is an error. */
export function parseAmount(text: string, currency: Currency = EUR): number {
  const match = AMOUNT.exec(text.trim().replace(/_/g, ""));
  if (!match) {
    throw new Error(`not an amount: ${JSON.stringify(text)}`);
  }
  const [, sign, whole, fraction = ""] = match;
  if (fraction.length > currency.minorUnits) {
    throw new Error(`${text} has more than ${currency.minorUnits} decimals for ${currency.code}`);
  }
  const minor = Number(whole) * 10 ** currency.minorUnits + Number(fraction.padEnd(currency.minorUnits, "0") || "0");
  return sign ? -minor : minor;
}

/** Rounds a fractional number of minor units to an integer. */
export function roundMinor(value: number, mode: RoundingMode = "half-up"): number {
  const floor = Math.floor(value);
  const rest = value - floor;
  const epsilon = 1e-9;
  switch (mode) {
    case "down":
      return value < 0 ? Math.ceil(value) : floor;
    case "half-even":
      if (Math.abs(rest - 0.5) < epsilon) {
        return floor % 2 === 0 ? floor : floor + 1;
      }
      return rest > 0.5 ? floor + 1 : floor;
    case "half-up":
      if (value < 0) {
        return -roundMinor(-value, "half-up");
      }
      return rest + epsilon >= 0.5 ? floor + 1 : floor;
  }
}

/** Formats minor units as "€1,234.50" or "-$3.00". */
export function formatMoney(minor: number, currency: Currency = EUR): string {
  const sign = minor < 0 ? "-" : "";
  const abs = Math.abs(minor);
  const scale = 10 ** currency.minorUnits;
  const whole = Math.floor(abs / scale)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  if (currency.minorUnits === 0) {
    return `${sign}${currency.symbol}${whole}`;
  }
  const fraction = (abs % scale).toString().padStart(currency.minorUnits, "0");
  return `${sign}${currency.symbol}${whole}.${fraction}`;
}
