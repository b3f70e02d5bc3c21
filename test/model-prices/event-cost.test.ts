import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { PriceBook } from "../../src/model-costs/cost";
import { eventCost, llmUsageOf } from "../../src/model-costs/event-cost";
import { catalogPrices } from "../../src/model-costs/prices";

const book = new PriceBook(catalogPrices());
const at = "2026-11-25T10:00:00.000Z";

describe("eventCost", () => {
	it("prices an LLM call at the catalog price in effect", () => {
		const cost = eventCost(
			{
				metadata: { model: "gpt-4o", input_tokens: 1000, output_tokens: 200, cached_input_tokens: 500 },
				timestamp: at,
			},
			book,
		);
		// (1000 × 2.5 + 200 × 10 + 500 × 1.25) / 1e6 = 0.005125
		expect(cost).toMatchObject({ kind: "priced", currency: "USD", model: "gpt-4o", provider: "openai" });
		expect(cost?.kind === "priced" && cost.amount.toString()).toBe("0.005125");
	});

	it("lets an explicit metadata cost win, in its cost_currency", () => {
		const cost = eventCost(
			{ metadata: { model: "gpt-4o", input_tokens: 1000, cost: 0.5, cost_currency: "EUR" }, timestamp: at },
			book,
		);
		expect(cost).toEqual({ kind: "explicit", amount: Decimal.from("0.5"), currency: "EUR" });
		expect(eventCost({ metadata: { cost: 0.25 }, timestamp: at }, book)).toMatchObject({ currency: "USD" });
	});

	it("marks a model without a price as unpriced, and says nothing of events without a call", () => {
		expect(eventCost({ metadata: { model: "my-llm", output_tokens: 3 }, timestamp: at }, book)).toMatchObject(
			{
				kind: "unpriced",
				usage: { model: "my-llm", provider: null, tokens: { output_tokens: 3 } },
			},
		);
		expect(
			eventCost({ metadata: { model: "gpt-4o", provider: "azure", input_tokens: 1 }, timestamp: at }, book)
				?.kind,
		).toBe("unpriced");
		expect(eventCost({ metadata: { model: "gpt-4o" }, timestamp: at }, book)).toBeNull();
		expect(eventCost({ metadata: { tokens: 5 }, timestamp: at }, book)).toBeNull();
		expect(eventCost({ metadata: null, timestamp: at }, book)).toBeNull();
	});

	it("reads only a string model and token counts that are numbers ≥ 0", () => {
		expect(llmUsageOf({ model: 4, input_tokens: 1 })).toBeNull();
		expect(llmUsageOf({ model: "gpt-4o", input_tokens: -1 })).toBeNull();
		expect(llmUsageOf({ model: "gpt-4o", input_tokens: "12" })).toBeNull();
		expect(llmUsageOf({ model: "gpt-4o", reasoning_tokens: 0, provider: 3 })).toEqual({
			model: "gpt-4o",
			provider: null,
			tokens: { reasoning_tokens: 0 },
		});
	});
});
