import { describe, expect, it } from "vitest";

import { computeTotals, parseInvoice, parseLine } from "../src/invoice.js";

const rates = { standard: 19, reduced: 7 };

describe("parseLine", () => {
  it("reads quantity, description and price", () => {
    expect(parseLine("2 x Widget @ 19.99")).toEqual({
      description: "Widget",
      quantity: 2,
      unitPrice: 1999,
      category: "standard",
      discountPercent: 0,
    });
  });

  it("reads a tax category and a discount", () => {
    const item = parseLine("3 x Coffee beans 1kg @ 12.50 [reduced] -10%");
    expect(item.category).toBe("reduced");
    expect(item.discountPercent).toBe(10);
  });
});

describe("invoice totals", () => {
  const invoice = parseInvoice(`
    # office order
    2 x Widget @ 19.99
    3 x Coffee beans 1kg @ 12.50 [reduced] -10%
  `);

  it("taxes each category once", () => {
    const totals = computeTotals(invoice, rates);
    expect(totals.net).toBe(3998 + 3375);
    expect(totals.tax.standard).toBe(760);
    expect(totals.tax.reduced).toBe(236);
    expect(totals.gross).toBe(3998 + 3375 + 760 + 236);
  });
});
