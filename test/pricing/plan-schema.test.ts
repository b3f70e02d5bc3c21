import { describe, expect, it } from "vitest";
import { RatePlanInput } from "../../src/pricing/charges";

type Body = Record<string, unknown>;

const tokens = { kind: "action", type: "llm.call", aggregate: "sum", field: "tokens" };
const calls = { kind: "action", type: "llm.call", aggregate: "count" };
const dealValue = { kind: "outcome", type: "deal.closed", aggregate: "sum" };
const tiers = [
	{ up_to: 1000, unit_price: 0.01, flat_fee: 1 },
	{ up_to: null, unit_price: 0.005 },
];

const perUnit: Body = { metric: "tokens", source: tokens, model: "per_unit", unit_price: 0.000002 };
const packaged: Body = {
	metric: "calls",
	source: calls,
	model: "package",
	package_size: 100,
	package_price: 5,
};
const tiered: Body = { metric: "tokens", source: tokens, model: "tiered", tiers };
const volume: Body = { metric: "tokens", source: tokens, model: "volume", tiers };
const percentage: Body = { metric: "deal_value", source: dealValue, model: "percentage", percent: 10 };
const llmCost = { kind: "action", type: "llm_call", aggregate: "cost" };
const costPlus: Body = { metric: "model_cost", source: llmCost, model: "cost_plus", markup_percent: 25 };

const plan = (fields: Body = {}): Body => ({ name: "Agent Pro", charges: [perUnit], ...fields });
const withCharge = (charge: Body): Body => plan({ charges: [charge] });
const withPerUnit = (fields: Body): Body => withCharge({ ...perUnit, ...fields });
const withTiers = (tierList: unknown[]): Body => withCharge({ ...tiered, tiers: tierList });
const withSource = (source: Body, model: Body = perUnit): Body => withCharge({ ...model, source });
const manyCharges = (n: number): Body =>
	plan({ charges: Array.from({ length: n }, (_, i) => ({ ...perUnit, metric: `metric_${i}` })) });

describe("RatePlanInput accepts", () => {
	it.each<[string, Body]>([
		["a minimal plan", { name: "Free", charges: [] }],
		["a per_unit charge", withCharge(perUnit)],
		["a package charge", withCharge(packaged)],
		["a tiered charge", withCharge(tiered)],
		["a volume charge", withCharge(volume)],
		["a percentage of outcome values", withCharge(percentage)],
		["cost plus a markup", withCharge(costPlus)],
		[
			"cost plus 0 % and 10,000 %",
			plan({
				charges: [
					{ ...costPlus, markup_percent: 0 },
					{ ...costPlus, metric: "b", markup_percent: 10000, included_quantity: 12.5 },
				],
			}),
		],
		[
			"cost plus per model",
			withCharge({ ...costPlus, source: { ...llmCost, filter: { model: ["gpt-4o", "gpt-4o-mini"] } } }),
		],
		["a markup with 12 decimals", withCharge({ ...costPlus, markup_percent: 12.000000000001 })],
		["tiers on cost", withCharge({ ...tiered, source: llmCost })],
		["a single open-ended tier", withTiers([{ up_to: null, unit_price: 1 }])],
		[
			"fractional tier bounds",
			withTiers([
				{ up_to: 0.5, unit_price: 1 },
				{ up_to: null, unit_price: 2 },
			]),
		],
		["a price with 12 decimals", withPerUnit({ unit_price: 1e-12 })],
		["free units and a description", withPerUnit({ included_quantity: 1000, description: "LLM tokens" })],
		["a count of outcomes", withSource({ kind: "outcome", type: "deal.closed", aggregate: "count" })],
		["a filter of one value", withSource({ ...tokens, filter: { model: "gpt-4o" } })],
		[
			"a filter of 5 keys and lists",
			withSource({ ...calls, filter: { a: ["1", "2"], b: "x", c: "y", d: ["z"], e: "w" } }),
		],
		["a max of an action field", withSource({ ...tokens, aggregate: "max" })],
		["a max of outcome values", withSource({ ...dealValue, aggregate: "max" })],
		[
			"a unique_count of a metadata field",
			withSource({ ...calls, aggregate: "unique_count", field: "user_id" }),
		],
		[
			"two charges over the same event type with different filters",
			plan({
				charges: [
					{ ...perUnit, source: { ...tokens, filter: { model: "gpt-4o" } } },
					{ ...perUnit, metric: "mini", source: { ...tokens, filter: { model: "gpt-4o-mini" } } },
				],
			}),
		],
		["a minimum amount", plan({ minimum_amount: 500 })],
		[
			"percent 0 and 100",
			plan({
				charges: [
					{ ...percentage, percent: 0 },
					{ ...percentage, metric: "b", percent: 100 },
				],
			}),
		],
		["50 charges", manyCharges(50)],
		[
			"a currency, a base fee and a null description",
			plan({ currency: "JPY", base_fee: 500, description: null }),
		],
	])("%s", (_, body) => {
		const result = RatePlanInput.safeParse(body);
		expect(result.error?.issues).toBeUndefined();
	});

	it("fills in the defaults", () => {
		expect(RatePlanInput.parse({ name: "Free", charges: [] })).toEqual({
			name: "Free",
			description: null,
			currency: "USD",
			base_fee: 0,
			minimum_amount: 0,
			prorate: false,
			charges: [],
		});
	});
});

describe("RatePlanInput rejects", () => {
	it.each<[string, Body, (string | number)[]]>([
		// plan fields
		["a missing name", { charges: [] }, ["name"]],
		["an empty name", plan({ name: "" }), ["name"]],
		["a blank name", plan({ name: "   " }), ["name"]],
		["a name over 200 characters", plan({ name: "x".repeat(201) }), ["name"]],
		["a description over 2000 characters", plan({ description: "x".repeat(2001) }), ["description"]],
		["a lower-case currency", plan({ currency: "usd" }), ["currency"]],
		["an unknown currency", plan({ currency: "XYZ" }), ["currency"]],
		["a negative base fee", plan({ base_fee: -1 }), ["base_fee"]],
		["a base fee with 13 decimals", plan({ base_fee: 1e-13 }), ["base_fee"]],
		["a base fee as a string", plan({ base_fee: "10" }), ["base_fee"]],
		["an unknown plan field", plan({ status: "archived" }), []],
		["missing charges", { name: "Free" }, ["charges"]],
		["51 charges", manyCharges(51), ["charges"]],
		// metric
		["an upper-case metric", withPerUnit({ metric: "Tokens" }), ["charges", 0, "metric"]],
		["an empty metric", withPerUnit({ metric: "" }), ["charges", 0, "metric"]],
		["a metric over 64 characters", withPerUnit({ metric: "m".repeat(65) }), ["charges", 0, "metric"]],
		["the reserved metric base_fee", withPerUnit({ metric: "base_fee" }), ["charges", 0, "metric"]],
		[
			"a duplicate metric",
			plan({ charges: [perUnit, { ...packaged, metric: "tokens" }] }),
			["charges", 1, "metric"],
		],
		// source
		["an unknown source kind", withSource({ ...calls, kind: "event" }), ["charges", 0, "source", "kind"]],
		[
			"a source type with a space",
			withSource({ ...calls, type: "llm call" }),
			["charges", 0, "source", "type"],
		],
		[
			"a source type over 100 characters",
			withSource({ ...calls, type: "t".repeat(101) }),
			["charges", 0, "source", "type"],
		],
		[
			"an unknown aggregate",
			withSource({ ...calls, aggregate: "avg" }),
			["charges", 0, "source", "aggregate"],
		],
		["an unknown source field", withSource({ ...calls, group_by: "x" }), ["charges", 0, "source"]],
		// filters and aggregations (§16)
		[
			"a filter that is not an object",
			withSource({ ...calls, filter: "x" }),
			["charges", 0, "source", "filter"],
		],
		["an empty filter", withSource({ ...calls, filter: {} }), ["charges", 0, "source", "filter"]],
		[
			"a filter of 6 keys",
			withSource({ ...calls, filter: { a: "1", b: "1", c: "1", d: "1", e: "1", f: "1" } }),
			["charges", 0, "source", "filter"],
		],
		[
			"a filter value that is a number",
			withSource({ ...calls, filter: { model: 4 } }),
			["charges", 0, "source", "filter", "model"],
		],
		[
			"a filter of an empty list",
			withSource({ ...calls, filter: { model: [] } }),
			["charges", 0, "source", "filter", "model"],
		],
		[
			"an empty filter value",
			withSource({ ...calls, filter: { model: "" } }),
			["charges", 0, "source", "filter", "model"],
		],
		[
			"a max of actions without field",
			withSource({ ...calls, aggregate: "max" }),
			["charges", 0, "source", "field"],
		],
		[
			"a max of outcomes with field",
			withSource({ ...dealValue, aggregate: "max", field: "amount" }),
			["charges", 0, "source", "field"],
		],
		[
			"a unique_count without field",
			withSource({ ...calls, aggregate: "unique_count" }),
			["charges", 0, "source", "field"],
		],
		[
			"percentage of a max",
			withSource({ ...dealValue, aggregate: "max" }, percentage),
			["charges", 0, "model"],
		],
		["a negative minimum_amount", plan({ minimum_amount: -1 }), ["minimum_amount"]],
		[
			"the reserved metric minimum_commitment",
			withPerUnit({ metric: "minimum_commitment" }),
			["charges", 0, "metric"],
		],
		["a field on a count", withSource({ ...calls, field: "tokens" }), ["charges", 0, "source", "field"]],
		[
			"an action sum without field",
			withSource({ ...tokens, field: undefined }),
			["charges", 0, "source", "field"],
		],
		[
			"an outcome sum with field",
			withSource({ ...dealValue, field: "amount" }),
			["charges", 0, "source", "field"],
		],
		// model
		["an unknown model", withPerUnit({ model: "flat" }), ["charges", 0, "model"]],
		["fields of another model", withPerUnit({ tiers }), ["charges", 0]],
		[
			"a per_unit charge without unit_price",
			withPerUnit({ unit_price: undefined }),
			["charges", 0, "unit_price"],
		],
		["a negative unit_price", withPerUnit({ unit_price: -0.01 }), ["charges", 0, "unit_price"]],
		["a unit_price with 13 decimals", withPerUnit({ unit_price: 1e-13 }), ["charges", 0, "unit_price"]],
		[
			"negative included_quantity",
			withPerUnit({ included_quantity: -1 }),
			["charges", 0, "included_quantity"],
		],
		["a package_size of 0", withCharge({ ...packaged, package_size: 0 }), ["charges", 0, "package_size"]],
		[
			"a negative package_price",
			withCharge({ ...packaged, package_price: -5 }),
			["charges", 0, "package_price"],
		],
		["percent over 100", withCharge({ ...percentage, percent: 100.5 }), ["charges", 0, "percent"]],
		["a negative percent", withCharge({ ...percentage, percent: -1 }), ["charges", 0, "percent"]],
		["percentage of an action sum", withSource(tokens, percentage), ["charges", 0, "model"]],
		[
			"a markup over 10,000 %",
			withCharge({ ...costPlus, markup_percent: 10000.5 }),
			["charges", 0, "markup_percent"],
		],
		["a negative markup", withCharge({ ...costPlus, markup_percent: -1 }), ["charges", 0, "markup_percent"]],
		[
			"a markup with 13 decimals",
			withCharge({ ...costPlus, markup_percent: 1e-13 }),
			["charges", 0, "markup_percent"],
		],
		[
			"cost_plus without a markup",
			withCharge({ ...costPlus, markup_percent: undefined }),
			["charges", 0, "markup_percent"],
		],
		["cost_plus of a token sum", withSource(tokens, costPlus), ["charges", 0, "model"]],
		["cost_plus of a count", withSource(calls, costPlus), ["charges", 0, "model"]],
		[
			"the cost of outcomes",
			withSource({ ...llmCost, kind: "outcome" }, costPlus),
			["charges", 0, "source", "aggregate"],
		],
		[
			"a field for cost",
			withSource({ ...llmCost, field: "cost" }, costPlus),
			["charges", 0, "source", "field"],
		],
		["a unit_price on cost_plus", withCharge({ ...costPlus, unit_price: 1 }), ["charges", 0]],
		[
			"percentage of an outcome count",
			withSource({ ...dealValue, aggregate: "count" }, percentage),
			["charges", 0, "model"],
		],
		// tiers
		["no tiers", withTiers([]), ["charges", 0, "tiers"]],
		[
			"a last tier with a bound",
			withTiers([
				{ up_to: 10, unit_price: 1 },
				{ up_to: 20, unit_price: 1 },
			]),
			["charges", 0, "tiers", 1, "up_to"],
		],
		[
			"an open tier before the last",
			withTiers([
				{ up_to: null, unit_price: 1 },
				{ up_to: null, unit_price: 1 },
			]),
			["charges", 0, "tiers", 0, "up_to"],
		],
		[
			"decreasing bounds",
			withTiers([
				{ up_to: 10, unit_price: 1 },
				{ up_to: 5, unit_price: 1 },
				{ up_to: null, unit_price: 1 },
			]),
			["charges", 0, "tiers", 1, "up_to"],
		],
		[
			"equal bounds",
			withTiers([
				{ up_to: 10, unit_price: 1 },
				{ up_to: 10, unit_price: 1 },
				{ up_to: null, unit_price: 1 },
			]),
			["charges", 0, "tiers", 1, "up_to"],
		],
		[
			"a bound of 0",
			withTiers([
				{ up_to: 0, unit_price: 1 },
				{ up_to: null, unit_price: 1 },
			]),
			["charges", 0, "tiers", 0, "up_to"],
		],
		["a tier without up_to", withTiers([{ unit_price: 1 }]), ["charges", 0, "tiers", 0, "up_to"]],
		[
			"a negative flat_fee",
			withTiers([{ up_to: null, unit_price: 1, flat_fee: -1 }]),
			["charges", 0, "tiers", 0, "flat_fee"],
		],
		[
			"an unknown tier field",
			withTiers([{ up_to: null, unit_price: 1, currency: "USD" }]),
			["charges", 0, "tiers", 0],
		],
		["tiers on a volume charge's sibling model", withCharge({ ...volume, unit_price: 1 }), ["charges", 0]],
	])("%s", (_, body, path) => {
		const result = RatePlanInput.safeParse(body);
		expect(result.success).toBe(false);
		expect(result.error?.issues.map((issue) => issue.path)).toEqual([path]);
	});
});
