import { describe, expect, it } from "vitest";
import { RatePlanInput } from "../../src/pricing/charges";
// @ts-expect-error: the bench is plain JavaScript, without types
import { FILTERED_PLAN, PLAN } from "../bench/scenarios.mjs";

// The bench provisions its plans through the API: they must stay valid as the plan schema changes.
describe("the bench's rate plans", () => {
	it.each([
		["plain", PLAN],
		["per model", FILTERED_PLAN],
	])("%s is a valid rate plan", (_, plan) => {
		expect(RatePlanInput.safeParse(plan).error?.issues).toBeUndefined();
	});
});
