import { describe, expect, it } from "vitest";
import { Decimal } from "../../src/lib/decimal";
import { MAX_ABS_NUMBER, MAX_MONEY_DECIMALS } from "../../src/lib/numbers";
import { CATALOG_ROWS } from "../../src/model-costs/catalog-data";
import { catalogPriceId, catalogPrices } from "../../src/model-costs/prices";

const ID = /^[a-z0-9][a-z0-9._-]*$/;
const ISO_DAY = /^\d{4}-\d{2}-\d{2}$/;
const RATES = [
	"input_per_million",
	"output_per_million",
	"cached_input_per_million",
	"reasoning_per_million",
	"per_request",
] as const;

describe("the model price catalog", () => {
	it("has at least 40 models of at least 6 providers, gpt-4o and claude-sonnet-4-5 among them", () => {
		const models = new Set(CATALOG_ROWS.map((r) => `${r.provider}/${r.model}`));
		const providers = new Set(CATALOG_ROWS.map((r) => r.provider));
		expect(models.size).toBeGreaterThanOrEqual(40);
		expect(providers.size).toBeGreaterThanOrEqual(6);
		for (const provider of ["openai", "anthropic", "google", "mistral", "deepseek", "xai"]) {
			expect(providers).toContain(provider);
		}
		expect(models).toContain("openai/gpt-4o");
		expect(models).toContain("anthropic/claude-sonnet-4-5");
	});

	it.each(CATALOG_ROWS.map((row) => [`${row.provider}/${row.model}`, row] as const))(
		"%s is well formed",
		(_, row) => {
			expect(row.provider).toMatch(ID);
			expect(row.model).toMatch(ID);
			expect(row.model.length).toBeLessThanOrEqual(200);
			for (const field of RATES) {
				const value = row[field];
				if (field === "input_per_million" || field === "output_per_million") expect(value).toBeDefined();
				if (value === undefined) continue;
				const price = Decimal.from(value);
				expect(price.isNegative(), field).toBe(false);
				expect(price.lte(Decimal.from(MAX_ABS_NUMBER)), field).toBe(true);
				expect(price.scale, field).toBeLessThanOrEqual(MAX_MONEY_DECIMALS);
				// Written canonically, so the file reads the way the API answers.
				expect(price.toString(), field).toBe(value);
			}
			expect(new Date(row.effective_from).toISOString()).toBe(row.effective_from);
			expect(new URL(row.source_url).protocol).toBe("https:");
			if (row.via !== undefined) expect(new URL(row.via).protocol).toBe("https:");
			expect(row.read_on).toMatch(ISO_DAY);
			expect(new Date(`${row.read_on}T00:00:00Z`).toISOString().slice(0, 10)).toBe(row.read_on);
			expect(row.read_on <= "2026-11-25" || row.read_on <= new Date().toISOString().slice(0, 10)).toBe(true);
		},
	);

	it("has no two rows for the same provider, model and effective_from", () => {
		const keys = CATALOG_ROWS.map((r) => `${r.provider}|${r.model}|${r.effective_from}`);
		expect(new Set(keys).size).toBe(keys.length);
	});

	it("gives every price a stable id derived from provider, model and effective_from", () => {
		const prices = catalogPrices();
		expect(prices).toHaveLength(CATALOG_ROWS.length);
		expect(new Set(prices.map((p) => p.id)).size).toBe(prices.length);
		for (const price of prices) {
			expect(price.id).toMatch(/^mpr_[0-9abcdefghjkmnpqrstvwxyz]{26}$/);
			expect(price.id).toBe(catalogPriceId(price));
			expect(price.origin).toBe("catalog");
			expect(price.currency).toBe("USD");
		}
		// Pinned: an id must never change between releases, or costed events would lose their price.
		const gpt4o = prices.find((p) => p.provider === "openai" && p.model === "gpt-4o");
		expect(gpt4o?.id).toBe("mpr_01jgfjjz0052v32sw2k0s6635s");
	});

	it("fills the rates a row leaves out: cached at the input price, reasoning at the output price, 0 per request", () => {
		const grok = catalogPrices().find((p) => p.model === "grok-4");
		expect(grok?.cached_input_per_million.eq(grok.input_per_million)).toBe(true);
		expect(grok?.reasoning_per_million.eq(grok.output_per_million)).toBe(true);
		expect(grok?.per_request.isZero()).toBe(true);
		const gpt4o = catalogPrices().find((p) => p.model === "gpt-4o");
		expect(gpt4o?.cached_input_per_million.toString()).toBe("1.25");
	});
});
