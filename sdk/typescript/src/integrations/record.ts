/** What the integrations record: one `llm_call` action per generation, one `tool_call` per tool execution. */
import type { MeteringClient } from "../client.js";
import type { Metadata } from "../types.js";
import { llmCost, type PriceTable } from "./pricing.js";

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

export interface LlmCall {
	model: string | undefined;
	provider?: string;
	inputTokens: number | undefined;
	outputTokens: number | undefined;
	streamed?: boolean;
}

export function agentKeyOf(options: IntegrationOptions): string {
	return typeof options.agentKey === "function" ? options.agentKey() : options.agentKey;
}

export function llmCallMetadata(options: IntegrationOptions, call: LlmCall): Metadata {
	const metadata: Metadata = { ...options.metadata };
	if (call.model !== undefined) metadata.model = call.model;
	if (call.provider !== undefined) metadata.provider = call.provider;
	if (call.inputTokens !== undefined) metadata.input_tokens = call.inputTokens;
	if (call.outputTokens !== undefined) metadata.output_tokens = call.outputTokens;
	if (call.inputTokens !== undefined || call.outputTokens !== undefined) {
		metadata.tokens = (call.inputTokens ?? 0) + (call.outputTokens ?? 0);
	}
	if (call.streamed) metadata.streamed = true;
	const cost = llmCost(options.prices, call.model, call.inputTokens, call.outputTokens);
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
