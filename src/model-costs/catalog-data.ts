/**
 * The model price catalog that ships with the service: list prices in USD per million tokens, as the providers
 * publish them for their standard (non-batch, non-priority) tier and prompts of ordinary length.
 *
 * Every row names the provider's published pricing page (`source_url`) and the day its figures were read
 * (`read_on`). Where the figures were read from a copy of that page, or from a page quoting it, rather than from
 * the provider's page itself, `via` names what was read and `read_on` is the day that copy says the provider's
 * page was read, or, when it says none, the day the copy was consulted. Fields left out follow the defaults of a
 * model price: cached input at the input price, reasoning at the output price, nothing per request. Where a
 * provider prices by time of day or by prompt length, the row keeps the higher (peak, ordinary-length) figure.
 *
 * To change a price, add a row with a later `effective_from` instead of editing one: a row's id derives from its
 * provider, model and effective_from, and events already costed keep pointing at it.
 */

export interface CatalogRow {
	provider: string;
	model: string;
	input_per_million: string;
	output_per_million: string;
	cached_input_per_million?: string;
	reasoning_per_million?: string;
	per_request?: string;
	/** ISO 8601 instant from which the row applies. */
	effective_from: string;
	source_url: string;
	/** YYYY-MM-DD */
	read_on: string;
	via?: string;
}

const SINCE = "2025-01-01T00:00:00.000Z";

const OPENAI = "https://developers.openai.com/api/docs/pricing";
const ANTHROPIC = "https://platform.claude.com/docs/en/about-claude/pricing";
const GOOGLE = "https://ai.google.dev/gemini-api/docs/pricing";
const MISTRAL = "https://mistral.ai/pricing";
const DEEPSEEK = "https://api-docs.deepseek.com/quick_start/pricing-details-usd";
const XAI = "https://docs.x.ai/developers/models";

const openaiGpt5 = {
	source_url: OPENAI,
	read_on: "2026-05-04",
	via: "https://github.com/api-evangelist/openai/blob/main/plans/openai-plans-pricing.yml",
};
const openaiGpt4o = {
	source_url: OPENAI,
	read_on: "2026-11-25",
	via: "https://chatgptpricing-akr.pages.dev/api-pricing",
};
const openaiGpt41 = {
	source_url: "https://platform.openai.com/docs/pricing",
	read_on: "2025-06-03",
	via: "https://hex.pm/packages/openai_responses/0.4.1/files/lib/responses/pricing.ex",
};
const anthropicClaude4 = {
	source_url: ANTHROPIC,
	read_on: "2026-11-25",
	via: "https://platform.claude.com/docs/zh-CN/about-claude/pricing",
};
const anthropicCurrent = { source_url: ANTHROPIC, read_on: "2026-11-25" };
const google = {
	source_url: GOOGLE,
	read_on: "2026-11-25",
	via: "https://deploybase.ai/articles/gemini-api-pricing",
};
const google3 = {
	source_url: GOOGLE,
	read_on: "2026-11-25",
	via: "https://aifreeapi.com/en/posts/gemini-api-pricing-2026",
};
const mistral = {
	source_url: MISTRAL,
	read_on: "2026-11-25",
	via: "https://developer.puter.com/tutorials/mistral-api-pricing/",
};
const deepseekV3 = { source_url: DEEPSEEK, read_on: "2026-11-25" };
const deepseekV4 = {
	source_url: "https://api-docs.deepseek.com/quick_start/pricing",
	read_on: "2026-10-27",
	via: "https://github.com/benderandrew069/deepseek-api-pricing-2026/wiki",
};
const xaiGrok4 = {
	source_url: XAI,
	read_on: "2026-11-25",
	via: "https://skills.sh/adaptationio/skrillz/xai-models",
};
const xaiGrok4x = {
	source_url: XAI,
	read_on: "2026-07-13",
	via: "https://docs.apiyi.com/en/api-capabilities/grok/overview",
};

// biome-ignore format: one row per price reads as a table
export const CATALOG_ROWS: readonly CatalogRow[] = [
	// OpenAI
	{ provider: "openai", model: "gpt-5.5", input_per_million: "5", cached_input_per_million: "0.5", output_per_million: "30", effective_from: SINCE, ...openaiGpt5 },
	{ provider: "openai", model: "gpt-5.5-pro", input_per_million: "30", output_per_million: "180", effective_from: SINCE, ...openaiGpt5 },
	{ provider: "openai", model: "gpt-5.4", input_per_million: "2.5", cached_input_per_million: "0.25", output_per_million: "15", effective_from: SINCE, ...openaiGpt5 },
	{ provider: "openai", model: "gpt-5.4-mini", input_per_million: "0.75", cached_input_per_million: "0.075", output_per_million: "4.5", effective_from: SINCE, ...openaiGpt5 },
	{ provider: "openai", model: "gpt-5.4-nano", input_per_million: "0.2", cached_input_per_million: "0.02", output_per_million: "1.25", effective_from: SINCE, ...openaiGpt5 },
	{ provider: "openai", model: "gpt-4o", input_per_million: "2.5", cached_input_per_million: "1.25", output_per_million: "10", effective_from: SINCE, ...openaiGpt4o },
	{ provider: "openai", model: "gpt-4o-mini", input_per_million: "0.15", cached_input_per_million: "0.075", output_per_million: "0.6", effective_from: SINCE, ...openaiGpt4o },
	{ provider: "openai", model: "gpt-4.1", input_per_million: "2", cached_input_per_million: "0.5", output_per_million: "8", effective_from: SINCE, ...openaiGpt41 },
	{ provider: "openai", model: "gpt-4.1-mini", input_per_million: "0.4", cached_input_per_million: "0.1", output_per_million: "1.6", effective_from: SINCE, ...openaiGpt41 },
	{ provider: "openai", model: "gpt-4.1-nano", input_per_million: "0.1", cached_input_per_million: "0.025", output_per_million: "0.4", effective_from: SINCE, ...openaiGpt41 },

	// Anthropic: cache hits are the cached input price (cache writes are billed as input here).
	{ provider: "anthropic", model: "claude-fable-5-1", input_per_million: "10", cached_input_per_million: "0.25", output_per_million: "50", effective_from: SINCE, ...anthropicCurrent },
	{ provider: "anthropic", model: "claude-fable-5", input_per_million: "10", cached_input_per_million: "1", output_per_million: "50", effective_from: SINCE, ...anthropicCurrent },
	{ provider: "anthropic", model: "claude-opus-5", input_per_million: "5", cached_input_per_million: "0.5", output_per_million: "25", effective_from: SINCE, ...anthropicCurrent },
	{ provider: "anthropic", model: "claude-opus-4-8", input_per_million: "5", cached_input_per_million: "0.5", output_per_million: "25", effective_from: SINCE, ...anthropicCurrent },
	{ provider: "anthropic", model: "claude-opus-4-7", input_per_million: "5", cached_input_per_million: "0.5", output_per_million: "25", effective_from: SINCE, ...anthropicCurrent },
	{ provider: "anthropic", model: "claude-opus-4-6", input_per_million: "5", cached_input_per_million: "0.5", output_per_million: "25", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-opus-4-5", input_per_million: "5", cached_input_per_million: "0.5", output_per_million: "25", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-opus-4-1", input_per_million: "15", cached_input_per_million: "1.5", output_per_million: "75", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-opus-4-0", input_per_million: "15", cached_input_per_million: "1.5", output_per_million: "75", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-sonnet-4-6", input_per_million: "3", cached_input_per_million: "0.3", output_per_million: "15", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-sonnet-4-5", input_per_million: "3", cached_input_per_million: "0.3", output_per_million: "15", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-sonnet-4-0", input_per_million: "3", cached_input_per_million: "0.3", output_per_million: "15", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-haiku-4-5", input_per_million: "1", cached_input_per_million: "0.1", output_per_million: "5", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-3-5-haiku", input_per_million: "0.8", cached_input_per_million: "0.08", output_per_million: "4", effective_from: SINCE, ...anthropicClaude4 },
	{ provider: "anthropic", model: "claude-3-haiku", input_per_million: "0.25", cached_input_per_million: "0.03", output_per_million: "1.25", effective_from: SINCE, ...anthropicClaude4 },

	// Google: prompts up to 200k tokens; context cache reads at a tenth of the input price.
	{ provider: "google", model: "gemini-2.5-pro", input_per_million: "1.25", cached_input_per_million: "0.125", output_per_million: "10", effective_from: SINCE, ...google },
	{ provider: "google", model: "gemini-2.5-flash", input_per_million: "0.3", cached_input_per_million: "0.03", output_per_million: "2.5", effective_from: SINCE, ...google },
	{ provider: "google", model: "gemini-2.5-flash-lite", input_per_million: "0.1", cached_input_per_million: "0.01", output_per_million: "0.4", effective_from: SINCE, ...google3 },
	{ provider: "google", model: "gemini-3-pro-preview", input_per_million: "2", output_per_million: "12", effective_from: SINCE, ...google3 },

	// Mistral: no cached-input discount published; reasoning billed as output.
	{ provider: "mistral", model: "mistral-medium-latest", input_per_million: "1.5", output_per_million: "7.5", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "mistral-large-latest", input_per_million: "0.5", output_per_million: "1.5", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "mistral-small-latest", input_per_million: "0.1", output_per_million: "0.3", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "magistral-medium-latest", input_per_million: "2", output_per_million: "5", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "magistral-small-latest", input_per_million: "0.5", output_per_million: "1.5", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "ministral-3b-latest", input_per_million: "0.1", output_per_million: "0.1", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "ministral-8b-latest", input_per_million: "0.15", output_per_million: "0.15", effective_from: SINCE, ...mistral },
	{ provider: "mistral", model: "codestral-latest", input_per_million: "0.3", output_per_million: "0.9", effective_from: SINCE, ...mistral },

	// DeepSeek: cache-miss input is the input price, cache-hit input the cached price.
	{ provider: "deepseek", model: "deepseek-chat", input_per_million: "0.27", cached_input_per_million: "0.07", output_per_million: "1.1", effective_from: SINCE, ...deepseekV3 },
	{ provider: "deepseek", model: "deepseek-reasoner", input_per_million: "0.55", cached_input_per_million: "0.14", output_per_million: "2.19", effective_from: SINCE, ...deepseekV3 },
	{ provider: "deepseek", model: "deepseek-flash", input_per_million: "0.3", cached_input_per_million: "0.006", output_per_million: "1.2", effective_from: SINCE, ...deepseekV4 },
	{ provider: "deepseek", model: "deepseek-v4-pro", input_per_million: "1.32", cached_input_per_million: "0.044", output_per_million: "3.96", effective_from: SINCE, ...deepseekV4 },

	// xAI
	{ provider: "xai", model: "grok-4", input_per_million: "3", output_per_million: "15", effective_from: SINCE, ...xaiGrok4 },
	{ provider: "xai", model: "grok-4-1-fast-reasoning", input_per_million: "0.2", output_per_million: "0.5", effective_from: SINCE, ...xaiGrok4 },
	{ provider: "xai", model: "grok-4-1-fast-non-reasoning", input_per_million: "0.2", output_per_million: "0.5", effective_from: SINCE, ...xaiGrok4 },
	{ provider: "xai", model: "grok-3-mini", input_per_million: "0.3", output_per_million: "0.5", effective_from: SINCE, ...xaiGrok4 },
	{ provider: "xai", model: "grok-4.5", input_per_million: "2", output_per_million: "6", effective_from: SINCE, ...xaiGrok4x },
	{ provider: "xai", model: "grok-4.3", input_per_million: "1.25", cached_input_per_million: "0.2", output_per_million: "2.5", effective_from: SINCE, ...xaiGrok4x },
	{ provider: "xai", model: "grok-4.20-0309-reasoning", input_per_million: "1.25", output_per_million: "2.5", effective_from: SINCE, ...xaiGrok4x },
	{ provider: "xai", model: "grok-4.20-0309-non-reasoning", input_per_million: "1.25", output_per_million: "2.5", effective_from: SINCE, ...xaiGrok4x },
	{ provider: "xai", model: "grok-build-0.1", input_per_million: "1", output_per_million: "2", effective_from: SINCE, ...xaiGrok4x },
];
