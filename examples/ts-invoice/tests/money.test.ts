import { describe, expect, it } from "vitest";

import { formatMoney, parseAmount, roundMinor } from "../src/money.js";

describe("parseAmount", () => {
  it("reads whole and fractional amounts as cents", () => {
    expect(parseAmount("19.99")).toBe(1999);
    expect(parseAmount("3.5")).toBe(350);
    expect(parseAmount("12")).toBe(1200);
  });
});

describe("roundMinor", () => {
  it("rounds halves up by default", () => {
    expect(roundMinor(2.5)).toBe(3);
    expect(roundMinor(2.49)).toBe(2);
  });
});

describe("formatMoney", () => {
  it("groups thousands and pads cents", () => {
    expect(formatMoney(123450)).toBe("€1,234.50");
    expect(formatMoney(7)).toBe("€0.07");
  });
});
