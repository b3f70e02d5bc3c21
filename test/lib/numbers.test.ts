import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { isExactAsJsonNumber } from "../../src/lib/money";
import { createAgent, createKey, expectError, post } from "../helpers";
import { dbFingerprint } from "../support/db-state";

// §1 Numbers in: every numeric input is finite with |x| ≤ 1e15, money has at most 12 decimal places; anything
// else → 400 validation_error and nothing is stored.

const charge = (overrides: Record<string, unknown>) => ({
	metric: "calls",
	source: { kind: "action", type: "call", aggregate: "count" },
	model: "per_unit",
	unit_price: 1,
	...overrides,
});
const plan = (overrides: Record<string, unknown>) => ({
	name: "Bounds",
	charges: [charge({})],
	...overrides,
});
const tiered = (tiers: unknown[]) =>
	plan({ charges: [charge({ model: "tiered", unit_price: undefined, tiers })] });

type Case = [
	name: string,
	path: string,
	body: (ctx: { agentId: string }) => unknown,
	field: string,
	sdk?: boolean,
];

const cases: Case[] = [
	[
		"a 1e200 unit price",
		"/v1/pricing/rate-plans",
		() => plan({ charges: [charge({ unit_price: 1e200 })] }),
		"charges[0].unit_price",
	],
	[
		"a unit price with 13 decimals",
		"/v1/pricing/rate-plans",
		() => plan({ charges: [charge({ unit_price: 1e-13 })] }),
		"charges[0].unit_price",
	],
	["a base fee over 1e15", "/v1/pricing/rate-plans", () => plan({ base_fee: 1e16 }), "base_fee"],
	[
		"an included quantity over 1e15",
		"/v1/pricing/rate-plans",
		() => plan({ charges: [charge({ included_quantity: 2e15 })] }),
		"charges[0].included_quantity",
	],
	[
		"a package size of 1e300",
		"/v1/pricing/rate-plans",
		() =>
			plan({
				charges: [charge({ model: "package", unit_price: undefined, package_size: 1e300, package_price: 1 })],
			}),
		"charges[0].package_size",
	],
	[
		"a package size of 5e-324 (it divides: 13+ decimals would multiply a quantity past any bound)",
		"/v1/pricing/rate-plans",
		() =>
			plan({
				charges: [
					charge({ model: "package", unit_price: undefined, package_size: 5e-324, package_price: 1 }),
				],
			}),
		"charges[0].package_size",
	],
	[
		"a tier bound of 1e16",
		"/v1/pricing/rate-plans",
		() =>
			tiered([
				{ up_to: 1e16, unit_price: 1 },
				{ up_to: null, unit_price: 1 },
			]),
		"charges[0].tiers[0].up_to",
	],
	[
		"a tier flat fee of 1e16",
		"/v1/pricing/rate-plans",
		() => tiered([{ up_to: null, unit_price: 1, flat_fee: 1e16 }]),
		"charges[0].tiers[0].flat_fee",
	],
	[
		"a cost amount of 1e16",
		"/v1/costs",
		({ agentId }) => ({ agent_id: agentId, cost_type: "gpu", amount: 1e16, period: "2026-10" }),
		"amount",
	],
	[
		"action metadata of 1e308",
		"/v1/actions",
		() => ({ agent_key: "bounds-1", action_type: "llm_call", metadata: { tokens: 1e308 } }),
		"metadata.tokens",
		true,
	],
	[
		"action metadata of -1e16",
		"/v1/actions",
		() => ({ agent_key: "bounds-1", action_type: "llm_call", metadata: { tokens: -1e16 } }),
		"metadata.tokens",
		true,
	],
	[
		"an action cost of 1e20",
		"/v1/actions",
		() => ({ agent_key: "bounds-1", action_type: "llm_call", metadata: { cost: 1e20 } }),
		"metadata.cost",
		true,
	],
	[
		"batch action metadata of 1e308",
		"/v1/actions/batch",
		() => ({ events: [{ agent_key: "bounds-1", action_type: "llm_call", metadata: { tokens: 1e308 } }] }),
		"events[0].metadata.tokens",
		true,
	],
	[
		"an outcome value of 1e16",
		"/v1/outcomes",
		() => ({ agent_key: "bounds-1", outcome_type: "lead", value: 1e16 }),
		"value",
		true,
	],
	[
		"outcome metadata of 1e300",
		"/v1/outcomes",
		() => ({ agent_key: "bounds-1", outcome_type: "lead", value: 1, metadata: { x: 1e300 } }),
		"metadata.x",
		true,
	],
	[
		"a batch outcome value of 1e16",
		"/v1/outcomes/batch",
		() => ({ events: [{ agent_key: "bounds-1", outcome_type: "lead", value: 1e16 }] }),
		"events[0].value",
		true,
	],
	[
		"simulated usage of 1e16",
		"/v1/pricing/simulate",
		() => ({ rate_plan_id: "plan_x", usage: { calls: 1e16 } }),
		"usage.calls",
	],
];

describe("numeric inputs are bounded (§1)", () => {
	for (const [name, path, body, field, sdk] of cases) {
		it(`refuses ${name} on ${path} with 400, storing nothing`, async () => {
			const agent = await createAgent();
			const key = sdk ? await createKey("sdk") : undefined;
			const before = await dbFingerprint();
			const response = await post(path, body({ agentId: agent.id }), key ? { key } : {});
			const error = expectError(response, 400, "validation_error");
			expect(error.details?.map((d) => d.path)).toContain(field);
			expect(error.message).toMatch(/1e15|decimal places|finite/);
			expect(await dbFingerprint()).toEqual(before);
		});
	}

	it("accepts the bounds themselves: 1e15, -1e15 in metadata, 12 decimals in prices", async () => {
		const created = await post(
			"/v1/pricing/rate-plans",
			plan({ base_fee: 1e15, charges: [charge({ unit_price: 0.000000000001, included_quantity: 1e15 })] }),
		);
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		const sdk = await createKey("sdk");
		const action = await post(
			"/v1/actions",
			{ agent_key: "bounds-2", action_type: "llm_call", metadata: { tokens: 1e15, delta: -1e15 } },
			{ key: sdk },
		);
		expect(action.status, JSON.stringify(action.body)).toBe(201);
		const outcome = await post(
			"/v1/outcomes",
			{ agent_key: "bounds-2", outcome_type: "lead", value: 1e15 },
			{ key: sdk },
		);
		expect(outcome.status, JSON.stringify(outcome.body)).toBe(201);
	});
});

describe("isExactAsJsonNumber: where a JSON number stops carrying an amount exactly", () => {
	it.each([
		["9999999999999.99", true], // 15 significant digits: always exact
		["999999999999.999", true],
		["999999999999999", true],
		["2000000000000000", true], // larger, and exact all the same
		["1000000000000000", true],
		["2000000000000000.01", false], // 1e15 + 1e15 + 0.01 would be written 2e15
		["1000000000000000.01", false],
		["90071992547409.93", false],
		["0.1234567890123456789", false],
		["-9999999999999.99", true],
	])("%s → %s", (amount, exact) => {
		expect(isExactAsJsonNumber(Decimal.from(amount))).toBe(exact);
	});
});
