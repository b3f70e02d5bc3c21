import { describe, expect, it } from "vitest";
import {
	formatQuantity,
	lateUsageLineDescription,
	usageLineDescription,
} from "../../src/invoicing/descriptions";
import { Decimal } from "../../src/lib/decimal";

const d = (text: string) => Decimal.from(text);

describe("line descriptions", () => {
	it.each([
		["0", "0"],
		["999", "999"],
		["1000", "1,000"],
		["1234567", "1,234,567"],
		["1234567.891", "1,234,567.891"],
		["0.000001", "0.000001"],
		["-1234.5", "-1,234.5"],
		["123456789012345678901234", "123,456,789,012,345,678,901,234"],
	])("groups %s as %s", (input, expected) => {
		expect(formatQuantity(d(input))).toBe(expected);
	});

	it("names the quantity and the free units, only when there are free units", () => {
		expect(usageLineDescription("LLM tokens", d("1234567"), d("100000"))).toBe(
			"LLM tokens — 1,234,567 units (first 100,000 included)",
		);
		expect(usageLineDescription("Searches", d("1"), d("0"))).toBe("Searches — 1 unit");
		expect(usageLineDescription("Searches", d("0"), d("0"))).toBe("Searches — 0 units");
	});

	it("says a supplementary line is late usage and gives the new total", () => {
		expect(lateUsageLineDescription("LLM tokens", d("4300"), d("105500"), d("100000"))).toBe(
			"LLM tokens — late usage: 4,300 units (105,500 in total, first 100,000 included)",
		);
		expect(lateUsageLineDescription("Calls", d("1"), d("11"), d("0"))).toBe(
			"Calls — late usage: 1 unit (11 in total)",
		);
		expect(lateUsageLineDescription("Calls", d("2"), d("12"), d("0"), "previous_invoice")).toBe(
			"Calls — usage since the previous invoice: 2 units (12 in total)",
		);
	});
});
