/**
 * What an LLM call cost, from a price table the user passes: prices per million input and output tokens. The
 * arithmetic is exact decimal (scaled integers), never binary floating point, and rounds half-up to 12 decimal
 * places — the precision the API takes for money.
 */

export interface ModelPrice {
	/** Price of 1,000,000 input (prompt) tokens, e.g. 2.5 or "2.50". */
	inputPerMillionTokens: number | string;
	/** Price of 1,000,000 output (completion) tokens. */
	outputPerMillionTokens: number | string;
}

/** Prices by model id as the provider answers it (`gpt-4o-mini`, `claude-sonnet-4-5`…). */
export type PriceTable = Record<string, ModelPrice>;

const SCALE = 12;
const ONE = 10n ** BigInt(SCALE);

/** A non-negative decimal (a finite number, or a string of digits) as an integer of 10^-12 units. */
export function toScaled(value: number | string): bigint {
	const text = typeof value === "number" ? numberText(value) : value.trim();
	const match = /^(\d+)(?:\.(\d+))?$/.exec(text);
	if (!match) throw new RangeError(`price must be a non-negative decimal, got ${String(value)}`);
	const fraction = (match[2] ?? "").padEnd(SCALE + 1, "0");
	let scaled = BigInt(match[1] as string) * ONE + BigInt(fraction.slice(0, SCALE));
	if (Number(fraction[SCALE]) >= 5) scaled += 1n; // half-up beyond 12 places
	return scaled;
}

function numberText(value: number): string {
	if (!Number.isFinite(value) || value < 0)
		throw new RangeError(`price must be finite and ≥ 0, got ${value}`);
	// Shortest round-trip text, without an exponent (1e-7 → 0.0000001).
	const text = String(value);
	return /e/i.test(text) ? value.toFixed(20).replace(/\.?0+$/, "") : text;
}

function scaledText(scaled: bigint): string {
	const whole = scaled / ONE;
	const fraction = (scaled % ONE).toString().padStart(SCALE, "0").replace(/0+$/, "");
	return fraction ? `${whole}.${fraction}` : `${whole}`;
}

/**
 * The cost of a call, as a decimal string with at most 12 decimal places, or undefined when the model has no price.
 * Unknown token counts count as 0.
 */
export function llmCostText(
	prices: PriceTable | undefined,
	model: string | undefined,
	inputTokens: number | undefined,
	outputTokens: number | undefined,
): string | undefined {
	const price = model === undefined ? undefined : prices?.[model];
	if (price === undefined) return undefined;
	const tokens = (n: number | undefined) =>
		BigInt(Number.isInteger(n) && (n as number) > 0 ? (n as number) : 0);
	const total =
		tokens(inputTokens) * toScaled(price.inputPerMillionTokens) +
		tokens(outputTokens) * toScaled(price.outputPerMillionTokens);
	// total is in 10^-12 units per million tokens: divide by 10^6, half-up.
	return scaledText((total + 500_000n) / 1_000_000n);
}

/** The same, as the JSON number the API's `cost` metadata takes (the double nearest to that decimal). */
export function llmCost(
	prices: PriceTable | undefined,
	model: string | undefined,
	inputTokens: number | undefined,
	outputTokens: number | undefined,
): number | undefined {
	const text = llmCostText(prices, model, inputTokens, outputTokens);
	return text === undefined ? undefined : Number(text);
}
