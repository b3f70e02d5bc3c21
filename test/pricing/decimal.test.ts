import { describe, expect, it } from "vitest";
import { allocate, Decimal } from "../../src/lib/decimal";
import { decimalPlaces, isCurrencyCode, minorUnits, roundMoney } from "../../src/lib/money";

const d = (x: string | number | bigint) => Decimal.from(x);

describe("Decimal.from", () => {
	it.each([
		["0.1", "0.1"],
		["-0.50", "-0.5"],
		["+12", "12"],
		["1200", "1200"],
		[".5", "0.5"],
		["5.", "5"],
		["1e-12", "0.000000000001"],
		["1.5E+3", "1500"],
		["-0", "0"],
		["-0.000", "0"],
		["000123.4500", "123.45"],
	])("parses the string %s as %s", (input, expected) => {
		expect(d(input).toString()).toBe(expected);
	});

	it.each([
		[0.1, "0.1"],
		[0.000002, "0.000002"],
		[1e-12, "0.000000000001"],
		[1.5e21, "1500000000000000000000"],
		[-0, "0"],
		[123.456, "123.456"],
		[2 ** 53, "9007199254740992"],
	])("reads the number %s through its shortest string: %s", (input, expected) => {
		expect(d(input).toString()).toBe(expected);
	});

	it("reads bigints as integers", () => {
		expect(d(12345678901234567890n).toString()).toBe("12345678901234567890");
	});

	it.each([NaN, Infinity, -Infinity])("refuses %s", (input) => {
		expect(() => d(input)).toThrow(RangeError);
	});

	it.each(["", " ", "abc", "1.2.3", "1e", "e5", "0x10", "1,5", "--1", ".", "1e99999"])(
		"refuses the string %j",
		(input) => {
			expect(() => d(input)).toThrow(RangeError);
		},
	);
});

describe("arithmetic", () => {
	it("adds and subtracts exactly where floats would not", () => {
		expect(d(0.1).add(d(0.2)).toString()).toBe("0.3");
		expect(d("1").sub(d("0.9")).toString()).toBe("0.1");
		expect(d("0.1").sub(d("0.3")).toString()).toBe("-0.2");
	});

	it("multiplies exactly", () => {
		expect(d(1234567).mul(d(0.000002)).toString()).toBe("2.469134");
		expect(d("-1.5").mul(d("1.5")).toString()).toBe("-2.25");
		expect(d("0.000000000001").mul(d("0.000000000001")).toString()).toBe("0.000000000000000000000001");
	});

	it("takes a percentage by moving the decimal point", () => {
		expect(d("1234.565").mulPercent(d(10)).toString()).toBe("123.4565");
		expect(d("3").mulPercent(d("33.3")).toString()).toBe("0.999");
	});

	it.each([
		["1001", "1000", "2"],
		["1000", "1000", "1"],
		["0", "1000", "0"],
		["0.5", "0.25", "2"],
		["0.51", "0.25", "3"],
		["-7", "2", "-3"],
		["7", "-2", "-3"],
		["-7", "-2", "4"],
	])("divCeilInt(%s / %s) = %s", (a, b, expected) => {
		expect(d(a).divCeilInt(d(b)).toString()).toBe(expected);
	});

	it("refuses to divide by zero", () => {
		expect(() => d(1).divCeilInt(d(0))).toThrow(RangeError);
	});

	it("sums, negates and picks min/max", () => {
		expect(Decimal.sum([d("0.1"), d("0.2"), d("-0.05")]).toString()).toBe("0.25");
		expect(Decimal.sum([]).toString()).toBe("0");
		expect(d("2.5").negate().toString()).toBe("-2.5");
		expect(Decimal.min(d(3), d("2.99"), d(4)).toString()).toBe("2.99");
		expect(Decimal.max(d(3), d("3.01"), d(-4)).toString()).toBe("3.01");
	});
});

describe("comparison", () => {
	it("compares across scales", () => {
		expect(d("1.10").eq(d("1.1"))).toBe(true);
		expect(d("1.1").compare(d("1.09"))).toBe(1);
		expect(d("-1").compare(d("0.5"))).toBe(-1);
		expect(d("2").compare(d("2.000"))).toBe(0);
		expect(d("2").lt(d("2.0001"))).toBe(true);
		expect(d("2").lte(d("2"))).toBe(true);
		expect(d("2").gt(d("1.9999"))).toBe(true);
		expect(d("2").gte(d("2.1"))).toBe(false);
	});

	it("knows zero, negatives and integers", () => {
		expect(d("0.000").isZero()).toBe(true);
		expect(d("-0.001").isNegative()).toBe(true);
		expect(d("-0").isNegative()).toBe(false);
		expect(d("3.000").isInteger()).toBe(true);
		expect(d("3.5").isInteger()).toBe(false);
	});
});

describe("roundHalfUp", () => {
	it.each([
		["2.345", 2, "2.35"],
		["2.344", 2, "2.34"],
		["-2.345", 2, "-2.35"],
		["-2.344", 2, "-2.34"],
		["2.5", 0, "3"],
		["-2.5", 0, "-3"],
		["-0.004", 2, "0"],
		["93.725", 2, "93.73"],
		["1.2", 4, "1.2"],
	])("rounds %s to %i places: %s", (input, scale, expected) => {
		expect(d(input).roundHalfUp(scale).toString()).toBe(expected);
	});
});

describe("toNumber", () => {
	it("gives the JSON number of the canonical string", () => {
		expect(d("123.4565").toNumber()).toBe(123.4565);
		expect(d("-0.000").toNumber()).toBe(0);
		expect(Object.is(d("-0.000").toNumber(), -0)).toBe(false);
	});
});

describe("allocate", () => {
	const strings = (parts: Decimal[]) => parts.map(String);

	it("splits proportionally, giving leftover cents to the largest remainders", () => {
		// 100 / 3 = 33.333… each: floors 33.33 ×3 = 99.99, one cent left, to the first (ties go earlier).
		expect(strings(allocate(d(100), [d(1), d(1), d(1)], 2))).toEqual(["33.34", "33.33", "33.33"]);
		// 10 by 1:2:7 → 1, 2, 7 exactly.
		expect(strings(allocate(d(10), [d(1), d(2), d(7)], 2))).toEqual(["1", "2", "7"]);
		// 0.05 by 0.3:0.7 → 0.015 and 0.035; floors 0.01 + 0.03, remainders equal, the earlier gets the cent.
		expect(strings(allocate(d("0.05"), [d("0.3"), d("0.7")], 2))).toEqual(["0.02", "0.03"]);
		// 1 by 1:3 at 2 decimals: 0.25, 0.75 exactly.
		expect(strings(allocate(d(1), [d(1), d(3)], 2))).toEqual(["0.25", "0.75"]);
	});

	it("keeps negative amounts summing exactly", () => {
		expect(strings(allocate(d(-100), [d(1), d(1), d(1)], 2))).toEqual(["-33.34", "-33.33", "-33.33"]);
	});

	it("gives everything to the first part when all weights are zero", () => {
		expect(strings(allocate(d("5.5"), [d(0), d(0)], 2))).toEqual(["5.5", "0"]);
	});

	it("refuses what it cannot split exactly", () => {
		expect(() => allocate(d("1.005"), [d(1)], 2)).toThrow(RangeError);
		expect(() => allocate(d(1), [], 2)).toThrow(RangeError);
		expect(() => allocate(d(1), [d(-1), d(2)], 2)).toThrow(RangeError);
	});
});

describe("money", () => {
	it.each([
		["USD", 2],
		["EUR", 2],
		["JPY", 0],
		["KRW", 0],
		["XOF", 0],
		["KWD", 3],
		["BHD", 3],
		["TND", 3],
	])("%s has %i minor-unit decimals", (currency, places) => {
		expect(minorUnits(currency)).toBe(places);
	});

	it("rounds money once, half away from zero, to the minor unit", () => {
		expect(roundMoney(d("2.469134"), "USD").toString()).toBe("2.47");
		expect(roundMoney(d("1234.5"), "JPY").toString()).toBe("1235");
		expect(roundMoney(d("1.2345"), "KWD").toString()).toBe("1.235");
		expect(roundMoney(d("-0.005"), "USD").toString()).toBe("-0.01");
	});

	it("knows ISO 4217 codes in upper case only", () => {
		expect(isCurrencyCode("USD")).toBe(true);
		expect(isCurrencyCode("JPY")).toBe(true);
		expect(isCurrencyCode("usd")).toBe(false);
		expect(isCurrencyCode("ABC")).toBe(false);
		expect(isCurrencyCode("US")).toBe(false);
	});

	it("counts decimal places exactly", () => {
		expect(decimalPlaces(0.1)).toBe(1);
		expect(decimalPlaces(1e-12)).toBe(12);
		expect(decimalPlaces(1e-13)).toBe(13);
		expect(decimalPlaces(1200)).toBe(0);
		expect(decimalPlaces("1.50")).toBe(1);
	});
});
