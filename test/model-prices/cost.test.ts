import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { costOf, PriceBook, priceInEffect } from "../../src/model-costs/cost";
import { catalogPrices, type ModelPrice } from "../../src/model-costs/prices";

// ---- arbitraries -------------------------------------------------------------------------------------------

/** A money input: up to 12 decimals, at most 1e15. */
const rate = fc
	.tuple(fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.integer({ min: 0, max: 12 }))
	.map(([units, scale]) => Decimal.fromUnits(units, scale));
/** A token count as JSON carries it: an integer or a short fraction, ≥ 0. */
const tokenCount = fc.oneof(
	fc.integer({ min: 0, max: 10_000_000 }),
	fc
		.tuple(fc.integer({ min: 0, max: 1_000_000 }), fc.integer({ min: 0, max: 3 }))
		.map(([units, scale]) => units / 10 ** scale),
);
const rates = fc.record({
	input_per_million: rate,
	output_per_million: rate,
	cached_input_per_million: rate,
	reasoning_per_million: rate,
	per_request: rate,
});
const counts = fc.record(
	{
		input_tokens: tokenCount,
		output_tokens: tokenCount,
		cached_input_tokens: tokenCount,
		reasoning_tokens: tokenCount,
	},
	{ requiredKeys: [] },
);

const price = (
	fields: Partial<ModelPrice> & Pick<ModelPrice, "provider" | "model" | "effective_from">,
): ModelPrice => ({
	id: `mpr_${fields.provider}_${fields.model}_${fields.effective_from}_${fields.origin ?? "custom"}`,
	currency: "USD",
	input_per_million: Decimal.ONE,
	output_per_million: Decimal.ONE,
	cached_input_per_million: Decimal.ONE,
	reasoning_per_million: Decimal.ONE,
	per_request: Decimal.ZERO,
	origin: "custom",
	created_at: fields.effective_from,
	...fields,
});

// ---- cost --------------------------------------------------------------------------------------------------

describe("costOf", () => {
	it("prices the four token kinds per million plus the per-request price, exactly", () => {
		const gpt4o = catalogPrices().find((p) => p.model === "gpt-4o") as ModelPrice;
		// 1,234 × 2.5 + 567 × 10 + 100 × 1.25 + 0 × 10 = 3085 + 5670 + 125 = 8880 per million.
		expect(
			costOf(gpt4o, { input_tokens: 1234, output_tokens: 567, cached_input_tokens: 100 }).toString(),
		).toBe("0.00888");
		expect(costOf(gpt4o, {}).toString()).toBe("0");
		const withFee = { ...gpt4o, per_request: Decimal.from("0.001") };
		expect(costOf(withFee, { reasoning_tokens: 1 }).toString()).toBe("0.00101");
		// Fractional counts are exact, not binary floats: 0.1 + 0.2 tokens of a 1-per-million rate.
		const unit = price({ provider: "p", model: "m", effective_from: "2026-01-01T00:00:00.000Z" });
		expect(costOf(unit, { input_tokens: 0.1, output_tokens: 0.2 }).toString()).toBe("0.0000003");
	});

	it("equals the formula computed in plain integers (property)", () => {
		fc.assert(
			fc.property(rates, counts, (r, c) => {
				const tokens = c as Record<string, number | undefined>;
				let perMillion = 0n;
				const scaled = (d: Decimal, scale: number) => d.units * 10n ** BigInt(scale - d.scale);
				for (const [n, k] of [
					[tokens.input_tokens, r.input_per_million],
					[tokens.output_tokens, r.output_per_million],
					[tokens.cached_input_tokens, r.cached_input_per_million],
					[tokens.reasoning_tokens, r.reasoning_per_million],
				] as const) {
					perMillion += scaled(Decimal.from(n ?? 0), 3) * scaled(k, 12); // scale 10^-15
				}
				// / 10^6 → scale 10^-21; per_request at scale 10^-12 → 10^-21.
				const expected = Decimal.fromUnits(perMillion + scaled(r.per_request, 12) * 10n ** 9n, 21);
				expect(costOf(r, c).eq(expected)).toBe(true);
			}),
			{ numRuns: 500 },
		);
	});

	it("is additive in tokens: two calls cost what their tokens cost together, plus one more per-request price", () => {
		fc.assert(
			fc.property(rates, counts, counts, (r, a, b) => {
				const sum = (x?: number, y?: number) =>
					Decimal.from(x ?? 0)
						.add(Decimal.from(y ?? 0))
						.toNumber();
				const together = costOf(r, {
					input_tokens: sum(a.input_tokens, b.input_tokens),
					output_tokens: sum(a.output_tokens, b.output_tokens),
					cached_input_tokens: sum(a.cached_input_tokens, b.cached_input_tokens),
					reasoning_tokens: sum(a.reasoning_tokens, b.reasoning_tokens),
				});
				expect(costOf(r, a).add(costOf(r, b)).eq(together.add(r.per_request))).toBe(true);
			}),
			{ numRuns: 300 },
		);
	});

	it("adds a million fractional-cent costs to their exact sum, to the cent and beyond", () => {
		// gpt-4o-mini: 0.15 in, 0.075 cached, 0.6 out per million; 1..1000 tokens each: fractions of a cent.
		const mini = catalogPrices().find((p) => p.model === "gpt-4o-mini") as ModelPrice;
		let total = Decimal.ZERO;
		let inputs = 0n;
		let outputs = 0n;
		let cached = 0n;
		for (let i = 0; i < 1_000_000; i++) {
			const input = (i % 1000) + 1;
			const output = ((i * 7) % 500) + 1;
			const cache = (i * 13) % 300;
			total = total.add(
				costOf(mini, { input_tokens: input, output_tokens: output, cached_input_tokens: cache }),
			);
			inputs += BigInt(input);
			outputs += BigInt(output);
			cached += BigInt(cache);
		}
		// The same tokens priced once: per token, 150, 600 and 75 billionths of a dollar.
		const exact = Decimal.fromUnits(inputs * 150n + outputs * 600n + cached * 75n, 9);
		expect(total.eq(exact)).toBe(true);
		// And so to the cent.
		expect(total.roundHalfUp(2).toString()).toBe(exact.roundHalfUp(2).toString());
	});
});

// ---- lookup ------------------------------------------------------------------------------------------------

describe("the price in effect", () => {
	const catalogOld = price({
		provider: "openai",
		model: "gpt-4o",
		origin: "catalog",
		effective_from: "2025-01-01T00:00:00.000Z",
	});
	const catalogNew = price({
		provider: "openai",
		model: "gpt-4o",
		origin: "catalog",
		effective_from: "2026-06-01T00:00:00.000Z",
	});
	const custom = price({ provider: "openai", model: "gpt-4o", effective_from: "2026-03-01T00:00:00.000Z" });
	const customLater = price({
		provider: "openai",
		model: "gpt-4o",
		effective_from: "2026-12-01T00:00:00.000Z",
	});
	const azure = price({
		provider: "azure",
		model: "gpt-4o",
		origin: "catalog",
		effective_from: "2026-09-01T00:00:00.000Z",
	});
	const book = new PriceBook([catalogOld, catalogNew, custom, customLater, azure]);

	it("is the latest custom price at or before the instant, else the catalog's latest", () => {
		expect(book.priceAt("2025-06-01T00:00:00.000Z", "gpt-4o", "openai")).toBe(catalogOld);
		expect(book.priceAt("2026-03-01T00:00:00.000Z", "gpt-4o", "openai")).toBe(custom);
		// A custom price wins over a newer catalog price.
		expect(book.priceAt("2026-07-01T00:00:00.000Z", "gpt-4o", "openai")).toBe(custom);
		expect(book.priceAt("2026-12-01T00:00:00.000Z", "gpt-4o", "openai")).toBe(customLater);
		expect(book.priceAt("2024-12-31T23:59:59.999Z", "gpt-4o", "openai")).toBeNull();
	});

	it("without a provider needs the model to be priced under one provider only", () => {
		expect(book.priceAt("2026-08-01T00:00:00.000Z", "gpt-4o")).toBe(custom);
		expect(book.priceAt("2026-09-01T00:00:00.000Z", "gpt-4o")).toBeNull();
		expect(book.priceAt("2026-09-01T00:00:00.000Z", "gpt-4o", "azure")).toBe(azure);
		expect(book.priceAt("2026-09-01T00:00:00.000Z", "gpt-5", "openai")).toBeNull();
		expect(book.priceAt("2026-09-01T00:00:00.000Z", "gpt-4o", "anthropic")).toBeNull();
	});

	it("prices every catalog model at any instant after the catalog took effect", () => {
		const catalog = new PriceBook(catalogPrices());
		for (const p of catalogPrices())
			expect(catalog.priceAt("2026-11-25T00:00:00.000Z", p.model, p.provider)).toBe(p);
		expect(catalog.priceAt("2026-11-25T00:00:00.000Z", "claude-sonnet-4-5")?.provider).toBe("anthropic");
	});

	it("prices a dated snapshot that has no price of its own at its model's price", () => {
		const catalog = new PriceBook(catalogPrices());
		const now = "2026-11-25T00:00:00.000Z";
		expect(catalog.priceAt(now, "gpt-4o-2024-08-06")?.model).toBe("gpt-4o");
		expect(catalog.priceAt(now, "claude-sonnet-4-5-20250929", "anthropic")?.model).toBe("claude-sonnet-4-5");
		expect(catalog.priceAt(now, "gpt-4o-2024-08")).toBeNull();
		// A snapshot with a price of its own keeps it.
		const snapshot = price({
			provider: "openai",
			model: "gpt-4o-2024-05-13",
			effective_from: "2026-01-01T00:00:00.000Z",
		});
		const withSnapshot = new PriceBook([...catalogPrices(), snapshot]);
		expect(withSnapshot.priceAt(now, "gpt-4o-2024-05-13")).toBe(snapshot);
		expect(withSnapshot.priceAt(now, "gpt-4o-2024-11-20")?.model).toBe("gpt-4o");
	});

	it("agrees with a naive reading of the rules on random price lists (property)", () => {
		const day = fc.integer({ min: 0, max: 30 }).map((d) => new Date(Date.UTC(2026, 0, 1 + d)).toISOString());
		const entry = fc.record({
			provider: fc.constantFrom("a", "b", "c"),
			model: fc.constantFrom("m1", "m2"),
			origin: fc.constantFrom("catalog" as const, "custom" as const),
			effective_from: day,
			n: fc.nat(1_000_000),
		});
		fc.assert(
			fc.property(
				fc.array(entry, { maxLength: 20 }),
				day,
				fc.constantFrom("m1", "m2"),
				fc.constantFrom(undefined, "a", "b"),
				(entries, at, model, provider) => {
					const prices = entries.map((e, i) => ({
						...price(e),
						id: `mpr_${String(i).padStart(4, "0")}_${e.n}`,
					}));
					const naive = (prov: string) => {
						const live = prices.filter(
							(p) => p.provider === prov && p.model === model && p.effective_from <= at,
						);
						const pick = (origin: string) =>
							live
								.filter((p) => p.origin === origin)
								.sort((x, y) =>
									x.effective_from === y.effective_from
										? x.id < y.id
											? 1
											: -1
										: x.effective_from < y.effective_from
											? 1
											: -1,
								)[0];
						return pick("custom") ?? pick("catalog") ?? null;
					};
					let expected: ModelPrice | null;
					if (provider !== undefined) expected = naive(provider);
					else {
						const found = ["a", "b", "c"].map(naive).filter((p) => p !== null);
						expected = found.length === 1 ? (found[0] as ModelPrice) : null;
					}
					expect(priceInEffect(prices, at, model, provider)).toBe(expected);
					// allAt gives exactly one price per (provider, model) that has one.
					const all = new PriceBook(prices).allAt(at);
					for (const p of all) expect(naive(p.provider) === p || p.model !== model).toBe(true);
				},
			),
			{ numRuns: 500 },
		);
	});
});
