import { env } from "cloudflare:workers";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { MAX_ABS_NUMBER } from "../../src/lib/numbers";
import { RatePlanInput } from "../../src/pricing/charges";
import { quantitiesForPlan, type UsageAggregate } from "../../src/pricing/quantities";
import { ratedUsageToJson, rateUsage } from "../../src/pricing/rate";
import { createKey, get, post } from "../helpers";
import { currentPeriod, instanceKey } from "../invoicing/fixtures";

// §1: with every input inside the bounds — however extreme — no money or quantity in a response is null or
// non-finite, and every total is the sum of its lines.

/** A number the bounded schemas accept: up to 1e15, with up to 12 decimals where it still reads exactly. */
const extremeNumber = fc.oneof(
	fc.constantFrom(MAX_ABS_NUMBER, 999_999_999_999_999, 1e-12, 0.000000000001, 123_456_789.000_001, 0),
	fc.double({ min: 0, max: MAX_ABS_NUMBER, noNaN: true }).map((n) => Number(n.toPrecision(12))),
);
const price = extremeNumber.filter((n) => Decimal.from(n).scale <= 12);
const count = fc.integer({ min: 0, max: 1_000_000 });

const plan = fc
	.record({
		currency: fc.constantFrom("USD", "JPY", "KWD"),
		base_fee: price,
		unit_price: price,
		package_size: price.filter((n) => n > 0),
		package_price: price,
		bound: extremeNumber.filter((n) => n >= 1 && n < MAX_ABS_NUMBER),
		tier_price: price,
		top_price: price,
		flat_fee: price,
		percent: fc.double({ min: 0, max: 100, noNaN: true }).map((n) => Number(n.toFixed(4))),
		included: extremeNumber,
	})
	.map((p) =>
		RatePlanInput.parse({
			name: "Extreme",
			currency: p.currency,
			base_fee: p.base_fee,
			charges: [
				{
					metric: "calls",
					source: { kind: "action", type: "call", aggregate: "count" },
					model: "per_unit",
					unit_price: p.unit_price,
					included_quantity: p.included,
				},
				{
					metric: "tokens",
					source: { kind: "action", type: "call", aggregate: "sum", field: "tokens" },
					model: "package",
					package_size: p.package_size,
					package_price: p.package_price,
				},
				{
					metric: "tiered_tokens",
					source: { kind: "action", type: "call", aggregate: "sum", field: "tokens" },
					model: "tiered",
					tiers: [
						{ up_to: p.bound, unit_price: p.tier_price, flat_fee: p.flat_fee },
						{ up_to: null, unit_price: p.top_price },
					],
				},
				{
					metric: "volume_tokens",
					source: { kind: "action", type: "call", aggregate: "sum", field: "tokens" },
					model: "volume",
					tiers: [
						{ up_to: p.bound, unit_price: p.tier_price },
						{ up_to: null, unit_price: p.top_price, flat_fee: p.flat_fee },
					],
				},
				{
					metric: "deal_value",
					source: { kind: "outcome", type: "deal", aggregate: "sum" },
					model: "percentage",
					percent: p.percent,
				},
			],
		}),
	);

/** What the store would hold after `events` events each carrying a value within the bounds. */
const aggregates = fc
	.record({ calls: count, tokens: extremeNumber, deals: count, dealValue: extremeNumber })
	.map((a): UsageAggregate[] => [
		{ kind: "action", type: "call", field: "", count: a.calls, sum: "0" },
		// as many events as calls, each with up to 1e15 tokens
		{
			kind: "action",
			type: "call",
			field: "tokens",
			count: a.calls,
			sum: Decimal.from(a.tokens).mul(Decimal.from(a.calls)).toString(),
		},
		{
			kind: "outcome",
			type: "deal",
			field: "",
			count: a.deals,
			sum: Decimal.from(a.dealValue).mul(Decimal.from(a.deals)).toString(),
		},
	]);

/** Fields that hold money or a quantity: always a finite number, never null. */
const NUMERIC_FIELDS = new Set([
	"amount",
	"quantity",
	"billable_quantity",
	"total",
	"revenue",
	"costs",
	"margin",
	"margin_percent",
	"count",
	"value",
]);

function expectFiniteNumbers(value: unknown, path = "") {
	if (typeof value === "number") expect(Number.isFinite(value), path).toBe(true);
	else if (Array.isArray(value)) {
		for (const [i, v] of value.entries()) expectFiniteNumbers(v, `${path}[${i}]`);
	} else if (typeof value === "object" && value !== null) {
		const record = value as Record<string, unknown>;
		for (const [k, v] of Object.entries(record)) {
			// a usage line of actions has no value: it is documented null ("sum of outcome values")
			const notApplicable = k === "value" && record.kind === "action";
			if (
				NUMERIC_FIELDS.has(k) &&
				!notApplicable &&
				(v === null || typeof v !== "object") &&
				typeof v !== "number"
			) {
				throw new Error(`${path}.${k} is ${JSON.stringify(v)}, not a number`);
			}
			expectFiniteNumbers(v, `${path}.${k}`);
		}
	}
}

describe("rating with extreme but valid values", () => {
	it("answers finite amounts and quantities, and totals that are the exact sums of their lines", () => {
		fc.assert(
			fc.property(plan, aggregates, (p, rows) => {
				const rated = rateUsage(p, quantitiesForPlan(p.charges, rows));
				expect(rated.total.eq(Decimal.sum(rated.charges.map((line) => line.amount)))).toBe(true);
				const json = JSON.parse(JSON.stringify(ratedUsageToJson(rated)));
				expectFiniteNumbers(json);
			}),
			{ numRuns: 300 },
		);
	});
});

describe("ingest → usage → invoice with extreme but valid values", () => {
	it("never answers null amounts, and invoice totals are the sums of their lines", async () => {
		const sdk = await createKey("sdk", "test");
		const today = new Date().toISOString().slice(0, 10);
		const admin = await createKey("admin", "test");
		await fc.assert(
			fc.asyncProperty(
				plan,
				extremeNumber,
				extremeNumber,
				fc.integer({ min: 1, max: 5 }),
				async (p, tokens, value, n) => {
					const created = await post("/v1/pricing/rate-plans", p, { key: admin });
					expect(created.status, JSON.stringify(created.body)).toBe(201);
					const account = await post(
						"/v1/accounts",
						{ name: "Extreme", email: "x@example.com", currency: p.currency },
						{ key: admin },
					);
					expect(account.status, JSON.stringify(account.body)).toBe(201);
					const agentKey = instanceKey("extreme");
					const subscription = await post(
						"/v1/subscriptions",
						{ account_id: account.body.id, rate_plan_id: created.body.id, agent_instance_ids: [agentKey] },
						{ key: admin },
					);
					expect(subscription.status, JSON.stringify(subscription.body)).toBe(201);
					// cost is money: at most 12 decimal places, like the prices.
					const cost =
						Decimal.from(value).scale <= 12 ? value : Decimal.from(value).roundHalfUp(12).toNumber();
					const events = Array.from({ length: n }, () => ({
						agent_key: agentKey,
						action_type: "call",
						metadata: { tokens, cost },
					}));
					expect((await post("/v1/actions/batch", { events }, { key: sdk })).status).toBe(201);
					const outcome = await post(
						"/v1/outcomes",
						{ agent_key: agentKey, outcome_type: "deal", value },
						{ key: sdk },
					);
					expect(outcome.status).toBe(201);

					const usage = await get(`/v1/usage?agent_key=${agentKey}`, { key: sdk });
					expect(usage.status, JSON.stringify(usage.body)).toBe(200);
					expectFiniteNumbers(usage.body);

					const generated = await post(
						"/v1/invoices/generate",
						{ billing_period: currentPeriod(), account_id: account.body.id },
						{ key: admin },
					);
					// An invoice whose amount a JSON number cannot carry exactly is refused, with nothing stored.
					if (generated.status === 409) {
						expect(generated.body.error.message).toContain("more significant digits than a JSON number");
						const none = await get(`/v1/invoices?account_id=${account.body.id}`, { key: admin });
						expect(none.body.total).toBe(0);
					} else expect(generated.status, JSON.stringify(generated.body)).toBe(201);
					for (const invoice of generated.status === 201 ? generated.body.invoices : []) {
						expectFiniteNumbers(invoice);
						// Stored amounts are exact decimals: the total is exactly the sum of the rounded lines, and the
						// JSON numbers are those decimals exactly.
						const stored = await env.DB.prepare("SELECT amount FROM invoices WHERE id = ?")
							.bind(invoice.id)
							.first<{ amount: string }>();
						const { results: lines } = await env.DB.prepare(
							"SELECT amount FROM invoice_lines WHERE invoice_id = ? ORDER BY position",
						)
							.bind(invoice.id)
							.all<{ amount: string }>();
						const sum = Decimal.sum(lines.map((line) => Decimal.from(line.amount)));
						expect(Decimal.from(stored?.amount as string).eq(sum), JSON.stringify(invoice)).toBe(true);
						expect(invoice.amount).toBe(Number(stored?.amount));
						expect(Decimal.from(invoice.amount).eq(Decimal.from(stored?.amount as string))).toBe(true);
						expect(invoice.line_items.map((l: { amount: number }) => l.amount)).toEqual(
							lines.map((line) => Number(line.amount)),
						);
						for (const [i, line] of lines.entries()) {
							expect(Decimal.from(invoice.line_items[i].amount).eq(Decimal.from(line.amount))).toBe(true);
						}
					}
					for (const path of [
						"/v1/costs",
						`/v1/reports/pnl?start_date=${currentPeriod()}-01&end_date=${today}`,
						`/v1/reports/revenue?start_date=${currentPeriod()}-01&end_date=${today}`,
						`/v1/invoices?account_id=${account.body.id}`,
					]) {
						const response = await get(path, { key: admin });
						expect(response.status, `${path} ${JSON.stringify(response.body)}`).toBe(200);
						expectFiniteNumbers(response.body, path);
					}
				},
			),
			{ numRuns: 8 },
		);
	});
});
