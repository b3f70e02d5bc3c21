/** What the integrations record: one `llm_call` action per generation, one `tool_call` per tool execution. */
import type { MeteringClient } from "../client.js";
import type { Metadata } from "../types.js";
import { llmCost, type PriceTable } from "./pricing.js";
import { providerId, type TokenSplit } from "./usage.js";

export interface IntegrationOptions {
	client: MeteringClient;
	/** The agent instance the events belong to; a function to decide per call. */
	agentKey: string | (() => string);
	/** Prices per million tokens by model id: adds `cost` (and `cost_currency`) to each llm_call. */
	prices?: PriceTable;
	/** ISO 4217 code of the prices; default USD (then no `cost_currency` is sent). */
	currency?: string;
	/** Added to every event's metadata (at most 50 keys in all). */
	metadata?: Metadata;
}

export interface LlmCall extends TokenSplit {
	model: string | undefined;
	/** As the framework names it; sent as the service's provider id (usage.ts). */
	provider?: string;
	streamed?: boolean;
}

const sumOf = (a?: number, b?: number) =>
	a === undefined && b === undefined ? undefined : (a ?? 0) + (b ?? 0);

export function agentKeyOf(options: IntegrationOptions): string {
	return typeof options.agentKey === "function" ? options.agentKey() : options.agentKey;
}

export function llmCallMetadata(options: IntegrationOptions, call: LlmCall): Metadata {
	const metadata: Metadata = { ...options.metadata };
	if (call.model !== undefined) metadata.model = call.model;
	const provider = providerId(call.provider);
	if (provider !== undefined) metadata.provider = provider;
	// The four counts the service prices a call by, each token in exactly one of them.
	if (call.inputTokens !== undefined) metadata.input_tokens = call.inputTokens;
	if (call.outputTokens !== undefined) metadata.output_tokens = call.outputTokens;
	if (call.cachedInputTokens !== undefined) metadata.cached_input_tokens = call.cachedInputTokens;
	if (call.reasoningTokens !== undefined) metadata.reasoning_tokens = call.reasoningTokens;
	// Input and output as the framework counts them: cache reads are input, reasoning is output.
	const input = sumOf(call.inputTokens, call.cachedInputTokens);
	const output = sumOf(call.outputTokens, call.reasoningTokens);
	if (input !== undefined || output !== undefined) metadata.tokens = (input ?? 0) + (output ?? 0);
	if (call.streamed) metadata.streamed = true;
	const cost = llmCost(options.prices, call.model, input, output);
	if (cost !== undefined) {
		metadata.cost = cost;
		if (options.currency !== undefined && options.currency !== "USD")
			metadata.cost_currency = options.currency;
	}
	return metadata;
}

/** Records an llm_call. Never throws into the caller's generation: a refused event goes to the client's onError. */
export function recordLlmCall(options: IntegrationOptions, call: LlmCall): Promise<void> {
	try {
		return options.client
			.action({ agentKey: agentKeyOf(options), type: "llm_call", metadata: llmCallMetadata(options, call) })
			.catch(() => {});
	} catch (error) {
		console.error("agent-metering: could not record an llm_call", error);
		return Promise.resolve();
	}
}

export function recordToolCall(options: IntegrationOptions, tool: string, ok: boolean, durationMs: number) {
	try {
		return options.client
			.action({
				agentKey: agentKeyOf(options),
				type: "tool_call",
				metadata: { ...options.metadata, tool, ok, duration_ms: Math.round(durationMs) },
			})
			.catch(() => {});
	} catch (error) {
		console.error("agent-metering: could not record a tool_call", error);
		return Promise.resolve();
	}
}
