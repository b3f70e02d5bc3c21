/**
 * The cost of one action, as ingest records it and a `cost` charge source adds it up. An explicit metadata `cost`
 * (in `cost_currency`, default USD) wins and is not priced again. Otherwise an action whose metadata names a
 * `model` (a string) and at least one token count costs its tokens at the price in effect at its timestamp
 * (`provider` in metadata picks among providers); without such a price it is unpriced, never silently free.
 * A priced call keeps the model name it was sent with, so a dated snapshot (`gpt-4o-2024-08-06`) priced at its
 * family's price is still counted as its own model, exactly as a charge's `filter.model` matches it.
 */
import { Decimal } from "../lib/decimal";
import { DEFAULT_CURRENCY } from "../lib/money";
import { costOf, type PriceBook, type TokenCounts } from "./cost";

type MetadataValue = string | number | boolean | null;

export const TOKEN_FIELDS = [
	"input_tokens",
	"output_tokens",
	"cached_input_tokens",
	"reasoning_tokens",
] as const;

export interface LlmUsage {
	model: string;
	provider: string | null;
	tokens: TokenCounts;
}

export type EventCost =
	| { kind: "explicit"; amount: Decimal; currency: string }
	| {
			kind: "priced";
			amount: Decimal;
			currency: string;
			priceId: string;
			/** The model as the call named it: a dated snapshot stays itself, even when its family's price priced it. */
			model: string;
			provider: string;
	  }
	| { kind: "unpriced"; usage: LlmUsage };

const isCount = (value: MetadataValue | undefined): value is number =>
	typeof value === "number" && Number.isFinite(value) && value >= 0;

/**
 * What is wrong with the LLM-call keys of an action's metadata, if anything: `model` and `provider` must be
 * strings, and the token counts numbers ≥ 0. Ingest refuses such an event rather than leave it unpriced.
 */
export function llmMetadataIssues(
	metadata: Readonly<Record<string, unknown>>,
): { key: string; message: string }[] {
	const issues: { key: string; message: string }[] = [];
	for (const key of ["model", "provider"] as const) {
		if (Object.hasOwn(metadata, key) && typeof metadata[key] !== "string") {
			issues.push({ key, message: `${key} must be a string` });
		}
	}
	for (const key of TOKEN_FIELDS) {
		if (Object.hasOwn(metadata, key) && !isCount(metadata[key] as MetadataValue)) {
			issues.push({ key, message: `${key} must be a number ≥ 0` });
		}
	}
	return issues;
}

/** llmMetadataIssues(metadata) is empty, without building it (the hot path of batch validation). */
export function hasValidLlmMetadata(metadata: Readonly<Record<string, unknown>>): boolean {
	if (Object.hasOwn(metadata, "model") && typeof metadata.model !== "string") return false;
	if (Object.hasOwn(metadata, "provider") && typeof metadata.provider !== "string") return false;
	for (const key of TOKEN_FIELDS) {
		if (Object.hasOwn(metadata, key) && !isCount(metadata[key] as MetadataValue)) return false;
	}
	return true;
}

/** The LLM call an action's metadata describes: a string `model` and at least one token count; else null. */
export function llmUsageOf(metadata: Readonly<Record<string, MetadataValue>> | null): LlmUsage | null {
	const model = metadata?.model;
	if (metadata == null || typeof model !== "string") return null;
	const tokens: TokenCounts = {};
	let any = false;
	for (const field of TOKEN_FIELDS) {
		const value = metadata[field];
		if (isCount(value)) {
			tokens[field] = value;
			any = true;
		}
	}
	if (!any) return null;
	const provider = metadata.provider;
	return { model, provider: typeof provider === "string" ? provider : null, tokens };
}

/** What the action cost; null when it says nothing of cost (no metadata cost, no LLM call). */
export function eventCost(
	event: { metadata: Readonly<Record<string, MetadataValue>> | null; timestamp: string },
	prices: PriceBook,
): EventCost | null {
	const explicit = event.metadata?.cost;
	if (typeof explicit === "number") {
		const currency = event.metadata?.cost_currency;
		return {
			kind: "explicit",
			amount: Decimal.from(explicit),
			currency: typeof currency === "string" ? currency : DEFAULT_CURRENCY,
		};
	}
	const usage = llmUsageOf(event.metadata);
	if (usage === null) return null;
	const price = prices.priceAt(event.timestamp, usage.model, usage.provider);
	if (price === null) return { kind: "unpriced", usage };
	return {
		kind: "priced",
		amount: costOf(price, usage.tokens),
		currency: price.currency,
		priceId: price.id,
		// One name per model: the cost record, GET /v1/costs?model=, margins by model and a charge's filter.model
		// all see the call under the name it was sent with, never under the price's (a snapshot's family).
		model: usage.model,
		provider: price.provider,
	};
}
