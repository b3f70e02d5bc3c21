/**
 * One name per model (docs/model-prices.md#one-name-per-model): a dated snapshot such as gpt-4o-2024-08-06 is a
 * model of its own, priced from its own price or, failing one, its family's. Cost records, GET /v1/costs?model=,
 * a charge's filter.model and margins by model all put a call under the name it was sent with, so a cost-plus
 * charge on gpt-4o bills exactly the cost that the costs and margins show for gpt-4o.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { PriceBook } from "../../src/model-costs/cost";
import { eventCost } from "../../src/model-costs/event-cost";
import { catalogPrices } from "../../src/model-costs/prices";
import { get } from "../helpers";
import { actions, sendActions } from "../invoicing/fixtures";
import { agentWith, clockAt, customerNamed, flush } from "../reports/fixtures";

afterEach(() => {
	vi.useRealTimers();
});

// (1,234,567 × 2.5 + 45,678 × 10) / 1,000,000 = 3.5431975 a call, at gpt-4o's catalog price.
const CALL = { input_tokens: 1_234_567, output_tokens: 45_678 };
const SNAPSHOT = "gpt-4o-2024-08-06";

describe("eventCost: the model a priced call is recorded under", () => {
	it("is the name the call was sent with, also when its family's price priced it", () => {
		const book = new PriceBook(catalogPrices());
		const at = "2026-04-10T12:00:00.000Z";
		const snapshot = eventCost({ metadata: { model: SNAPSHOT, ...CALL }, timestamp: at }, book);
		expect(snapshot).toMatchObject({ kind: "priced", model: SNAPSHOT, provider: "openai" });
		expect(snapshot?.kind === "priced" && snapshot.amount.toString()).toBe("3.5431975");
		const family = eventCost({ metadata: { model: "gpt-4o", ...CALL }, timestamp: at }, book);
		expect(family).toMatchObject({ kind: "priced", model: "gpt-4o" });
	});
});

describe("a cost-plus charge on gpt-4o beside calls of a dated snapshot", () => {
	it("bills what costs and margins put under gpt-4o, and the snapshot stays its own model", async () => {
		clockAt("2026-04-10T12:00:00.000Z");
		// docs/model-prices.md#cost-plus-pricing: gpt-4o at cost + 25 %.
		const customer = await customerNamed(
			"Snapshot Co",
			{
				name: "GPT-4o at cost + 25 %",
				currency: "USD",
				charges: [
					{
						metric: "gpt4o_cost",
						source: { kind: "action", type: "llm_call", aggregate: "cost", filter: { model: "gpt-4o" } },
						model: "cost_plus",
						markup_percent: 25,
					},
				],
			},
			1,
		);
		const [key] = customer.instances as [string];
		await agentWith("Snapshot agent", [key]);
		await sendActions([
			...actions(key, "llm_call", 2, { model: "gpt-4o", ...CALL }),
			...actions(key, "llm_call", 1, { model: SNAPSHOT, ...CALL }),
		]);
		await flush({ subscriptions: [customer.subscription.id] });

		// The charge: 2 × 3.5431975 = 7.086395; × 1.25 = 8.85799375 → 8.86.
		const usage = await get(`/v1/usage?subscription_id=${customer.subscription.id}`);
		expect(usage.body.charges).toEqual([
			expect.objectContaining({ metric: "gpt4o_cost", quantity: 7.086395 }),
		]);
		expect(usage.body.total).toBe(8.86);

		const period = "start_date=2026-04-01&end_date=2026-04-30";
		const gpt4o = await get(`/v1/costs?model=gpt-4o&${period}`);
		expect(gpt4o.body.total).toBe(7.086395);
		expect(gpt4o.body.costs.map((c: { model: string }) => c.model)).toEqual(["gpt-4o"]);
		const snapshot = await get(`/v1/costs?model=${SNAPSHOT}&${period}`);
		expect(snapshot.body.total).toBe(3.5431975);
		expect(snapshot.body.costs.map((c: { model: string }) => c.model)).toEqual([SNAPSHOT]);

		const margins = await get("/v1/reports/margins?billing_period=2026-04&group_by=model");
		expect(margins.status, JSON.stringify(margins.body)).toBe(200);
		const row = (id: string) => margins.body.breakdown.find((r: { id: string | null }) => r.id === id);
		// 8.86 − 7.086395 = 1.773605; / 8.86 = 20.02 %: the markup's margin, not a loss.
		expect(row("gpt-4o")).toEqual({
			id: "gpt-4o",
			name: "gpt-4o",
			revenue: 8.86,
			costs: 7.086395,
			margin: 1.773605,
			margin_percent: 20.02,
		});
		expect(row(SNAPSHOT)).toMatchObject({ revenue: 0, costs: 3.5431975 });
		expect(margins.body.costs).toBe(10.6295925);
	});
});
