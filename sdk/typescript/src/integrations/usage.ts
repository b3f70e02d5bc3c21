/**
 * Token counts as the service prices them: `input_tokens` are the uncached input tokens, `cached_input_tokens`
 * those read from the provider's prompt cache, `output_tokens` the visible output and `reasoning_tokens` the
 * reasoning the model did before it. Frameworks report input with the cache reads inside it and output with the
 * reasoning inside it; these helpers split them out, so no token is priced twice.
 */

export interface TokenSplit {
	inputTokens?: number;
	outputTokens?: number;
	cachedInputTokens?: number;
	reasoningTokens?: number;
}

const count = (value: unknown): number | undefined =>
	typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;

/** `whole − part`, never below 0; the whole when the part is unknown. */
function less(whole: number | undefined, part: number | undefined): number | undefined {
	if (whole === undefined) return undefined;
	return Math.max(0, whole - (part ?? 0));
}

/**
 * From totals that include their details: input (with cache reads) and output (with reasoning). Details that
 * are unknown or 0 are left out.
 */
export function splitTokens(totals: {
	input?: unknown;
	output?: unknown;
	cacheRead?: unknown;
	reasoning?: unknown;
}): TokenSplit {
	const cacheRead = count(totals.cacheRead);
	const reasoning = count(totals.reasoning);
	const split: TokenSplit = {
		inputTokens: less(count(totals.input), cacheRead),
		outputTokens: less(count(totals.output), reasoning),
	};
	if (cacheRead) split.cachedInputTokens = cacheRead;
	if (reasoning) split.reasoningTokens = reasoning;
	return split;
}

/** Adds two splits (a call reported in several messages or chunks). */
export function addTokens(a: TokenSplit, b: TokenSplit): TokenSplit {
	const sum = (x?: number, y?: number) =>
		x === undefined && y === undefined ? undefined : (x ?? 0) + (y ?? 0);
	const out: TokenSplit = {
		inputTokens: sum(a.inputTokens, b.inputTokens),
		outputTokens: sum(a.outputTokens, b.outputTokens),
	};
	const cached = sum(a.cachedInputTokens, b.cachedInputTokens);
	const reasoning = sum(a.reasoningTokens, b.reasoningTokens);
	if (cached !== undefined) out.cachedInputTokens = cached;
	if (reasoning !== undefined) out.reasoningTokens = reasoning;
	return out;
}

// Framework names of providers that the service's model prices call otherwise.
const PROVIDER_ALIASES: Record<string, string> = {
	"google-genai": "google",
	google_genai: "google",
	google_vertexai: "google",
	"google-vertex": "google",
	vertexai: "google",
	mistralai: "mistral",
	"x-ai": "xai",
};

/**
 * The provider id the service's model prices use: lower case, without the API surface the AI SDK appends
 * (`openai.chat` → `openai`, `google.generative-ai` → `google`).
 */
export function providerId(name: string | undefined): string | undefined {
	if (name === undefined || name === "") return undefined;
	const base = name.toLowerCase().split(".")[0] as string;
	return PROVIDER_ALIASES[base] ?? base;
}
