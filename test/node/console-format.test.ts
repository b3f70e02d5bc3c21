import { describe, expect, it } from "vitest";
import { belowZero, money, percent } from "../../console/src/format";

// The console's figures (console/src/format.ts): a negative zero is never shown, nor marked as negative.
describe("console money and percent formats", () => {
	it("shows an amount that rounds to zero as $0.00, never −$0.00", () => {
		expect(money(-0, "USD")).toBe("$0.00");
		expect(money(-0.004, "USD")).toBe("$0.00");
		expect(money(-0.3, "JPY")).toBe("¥0");
		expect(money(-0.005, "USD")).toBe("-$0.01");
		expect(money(-12.5, "USD")).toBe("-$12.50");
		expect(percent(-0.001)).toBe("0.00 %");
		expect(percent(-7.43)).toBe("-7.43 %");
	});

	it("marks as negative only what reads negative", () => {
		expect(belowZero(-0)).toBe(false);
		expect(belowZero(-0.004)).toBe(false);
		expect(belowZero(-0.005)).toBe(true);
		expect(belowZero(-0.3, "JPY")).toBe(false);
		expect(belowZero(-1, "JPY")).toBe(true);
	});
});
