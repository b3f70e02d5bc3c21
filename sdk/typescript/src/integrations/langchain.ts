/**
 * LangChain.js (and LangGraph.js): a callback handler that records every LLM or chat-model call as an `llm_call`
 * with the model, its provider and its tokens (uncached input, cached input, output, reasoning), which the service
 * prices — or, from your own price table, with its cost — and every tool run as a `tool_call`.
 *
 *   const metering = new MeteringCallbackHandler({ client, agentKey, prices });
 *   await model.invoke(messages, { callbacks: [metering] });     // or graph.invoke(input, { callbacks: [metering] })
 *
 * With `budget`, each model call is guarded (guard.ts): its estimated cost is reserved when it starts — a call
 * that does not fit fails with the reservation's BudgetExceededError before the model is asked — its llm_call
 * carries `metadata.reservation_id` (which settles the hold), and a call that fails releases it.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import type { LLMResult } from "@langchain/core/outputs";
import { type BudgetGuard, releaseQuietly } from "./guard.js";
import { agentKeyOf, type IntegrationOptions, recordLlmCall, recordToolCall } from "./record.js";
import { addTokens, splitTokens, type TokenSplit } from "./usage.js";

export type { ModelPrice, PriceTable } from "./pricing.js";
export type { IntegrationOptions } from "./record.js";

export interface LangChainMeteringOptions extends IntegrationOptions {
	/** Record tool runs as `tool_call` actions. Default true. */
	recordTools?: boolean;
	/** Reserve each model call's estimated cost before it runs (docs/reservations.md of the service). */
	budget?: BudgetGuard;
}

interface MessageLike {
	usage_metadata?: {
		input_tokens?: number;
		output_tokens?: number;
		input_token_details?: { cache_read?: number };
		output_token_details?: { reasoning?: number };
	};
	response_metadata?: { model_name?: string; model?: string };
}

const str = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

/** The model a run names at its start: LangSmith's ls_model_name, else the invocation parameters. */
function modelAtStart(extraParams?: Record<string, unknown>, metadata?: Record<string, unknown>) {
	const params = extraParams?.invocation_params as Record<string, unknown> | undefined;
	return (
		str(metadata?.ls_model_name) ?? str(params?.model) ?? str(params?.model_name) ?? str(params?.modelName)
	);
}

export class MeteringCallbackHandler extends BaseCallbackHandler {
	name = "agent_metering";
	private readonly options: LangChainMeteringOptions;
	private readonly models = new Map<string, { model?: string; provider?: string }>();
	private readonly tools = new Map<string, { name: string; started: number }>();
	private readonly reservations = new Map<string, string>();

	constructor(options: LangChainMeteringOptions) {
		// Awaited, so that an event is buffered before the call returns (a flush right after sees it). With a budget,
		// a refused reservation must stop the call: the handler's errors are raised.
		super({ _awaitHandler: true, raiseError: options.budget !== undefined });
		this.options = options;
	}

	/** With a budget: holds the call's estimate before it runs; throws BudgetExceededError when it does not fit. */
	private async reserveFor(runId: string, extraParams?: Record<string, unknown>) {
		const budget = this.options.budget;
		if (budget === undefined) return;
		const { estimate, ttlSeconds } = budget;
		const reservation = await this.options.client.reserve({
			agentKey: agentKeyOf(this.options),
			amount: typeof estimate === "function" ? estimate(extraParams?.invocation_params) : estimate,
			ttlSeconds,
		});
		this.reservations.set(runId, reservation.id);
	}

	override async handleLLMStart(
		_llm: Serialized,
		_prompts: string[],
		runId: string,
		_parentRunId?: string,
		extraParams?: Record<string, unknown>,
		_tags?: string[],
		metadata?: Record<string, unknown>,
	) {
		this.models.set(runId, {
			model: modelAtStart(extraParams, metadata),
			provider: str(metadata?.ls_provider),
		});
		return this.reserveFor(runId, extraParams);
	}

	override async handleChatModelStart(
		_llm: Serialized,
		_messages: unknown[][],
		runId: string,
		_parentRunId?: string,
		extraParams?: Record<string, unknown>,
		_tags?: string[],
		metadata?: Record<string, unknown>,
	) {
		this.models.set(runId, {
			model: modelAtStart(extraParams, metadata),
			provider: str(metadata?.ls_provider),
		});
		return this.reserveFor(runId, extraParams);
	}

	override async handleLLMEnd(output: LLMResult, runId: string) {
		const start = this.models.get(runId);
		this.models.delete(runId);
		let tokens: TokenSplit | undefined;
		let model: string | undefined;
		for (const generation of output.generations.flat()) {
			const message = (generation as { message?: MessageLike }).message;
			const usage = message?.usage_metadata;
			if (usage) {
				// input_tokens count cache reads, output_tokens count reasoning: split them out.
				const split = splitTokens({
					input: usage.input_tokens ?? 0,
					output: usage.output_tokens ?? 0,
					cacheRead: usage.input_token_details?.cache_read,
					reasoning: usage.output_token_details?.reasoning,
				});
				tokens = tokens === undefined ? split : addTokens(tokens, split);
			}
			model ??= str(message?.response_metadata?.model_name) ?? str(message?.response_metadata?.model);
		}
		if (tokens === undefined) {
			// Older integrations report usage for the whole call in llmOutput.
			const usage = (output.llmOutput?.tokenUsage ?? output.llmOutput?.estimatedTokenUsage) as
				| { promptTokens?: number; completionTokens?: number }
				| undefined;
			tokens = splitTokens({ input: usage?.promptTokens, output: usage?.completionTokens });
		}
		const reservationId = this.reservations.get(runId);
		this.reservations.delete(runId);
		const recordWith =
			reservationId === undefined
				? this.options
				: { ...this.options, metadata: { ...this.options.metadata, reservation_id: reservationId } };
		await recordLlmCall(recordWith, {
			model: model ?? start?.model,
			provider: start?.provider,
			...tokens,
		});
	}

	override async handleLLMError(_error: Error, runId: string) {
		this.models.delete(runId);
		const reservationId = this.reservations.get(runId);
		this.reservations.delete(runId);
		if (reservationId !== undefined) await releaseQuietly(this.options.client, reservationId);
	}

	override handleToolStart(
		tool: Serialized,
		_input: string,
		runId: string,
		_parentRunId?: string,
		_tags?: string[],
		_metadata?: Record<string, unknown>,
		runName?: string,
	) {
		if (this.options.recordTools === false) return;
		const name = runName ?? str((tool as { name?: string }).name) ?? tool.id?.at(-1) ?? "tool";
		this.tools.set(runId, { name, started: Date.now() });
	}

	override async handleToolEnd(_output: unknown, runId: string) {
		await this.endTool(runId, true);
	}

	override async handleToolError(_error: Error, runId: string) {
		await this.endTool(runId, false);
	}

	private async endTool(runId: string, ok: boolean) {
		const tool = this.tools.get(runId);
		if (tool === undefined) return;
		this.tools.delete(runId);
		await recordToolCall(this.options, tool.name, ok, Date.now() - tool.started);
	}
}
