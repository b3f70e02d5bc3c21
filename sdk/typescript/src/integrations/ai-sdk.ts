/**
 * Vercel AI SDK: a language-model middleware that records every generation — `generateText`, `streamText`,
 * `generateObject`… — as an `llm_call` with the model, its provider and its tokens (uncached input, cached input,
 * output, reasoning), which the service prices; or, from your own price table, with its cost.
 *
 *   import { wrapLanguageModel } from "ai";
 *   const model = wrapLanguageModel({ model: openai("gpt-4o-mini"), middleware: meteringMiddleware({ client, agentKey, prices }) });
 *
 * A stream is recorded when it finishes (its `finish` part carries the usage).
 *
 * With `budget`, each call is guarded (guard.ts): its estimated cost is reserved first — a call that does not fit
 * is not made, the reservation's BudgetExceededError is thrown instead — its llm_call carries
 * `metadata.reservation_id`, which settles the hold, and a call that fails releases it.
 */
import type { LanguageModelMiddleware } from "ai";
import type { Reservation } from "../reservations.js";
import { type BudgetGuard, releaseQuietly } from "./guard.js";
import { type IntegrationOptions, recordLlmCall } from "./record.js";
import { splitTokens, type TokenSplit } from "./usage.js";

export type { BudgetGuard } from "./guard.js";
export type { ModelPrice, PriceTable } from "./pricing.js";
export type { IntegrationOptions } from "./record.js";

type Tokens =
	| number
	| { total?: number | undefined; cacheRead?: number | undefined; reasoning?: number | undefined }
	| undefined;

/** Usage as language-model specification v4/v3 (`{total, cacheRead…}` objects) or v2 (numbers) gives it. */
interface UsageLike {
	inputTokens?: Tokens;
	outputTokens?: Tokens;
	/** v2 */
	cachedInputTokens?: number;
	reasoningTokens?: number;
}

const part = (tokens: Tokens, key: "total" | "cacheRead" | "reasoning") =>
	typeof tokens === "number" ? (key === "total" ? tokens : undefined) : tokens?.[key];

/** The four counts, with cache reads taken out of input and reasoning out of output. */
function tokensOf(usage: UsageLike | undefined): TokenSplit {
	return splitTokens({
		input: part(usage?.inputTokens, "total"),
		output: part(usage?.outputTokens, "total"),
		cacheRead: part(usage?.inputTokens, "cacheRead") ?? usage?.cachedInputTokens,
		reasoning: part(usage?.outputTokens, "reasoning") ?? usage?.reasoningTokens,
	});
}

export interface AiSdkMeteringOptions extends IntegrationOptions {
	/** Reserve each call's estimated cost before making it (docs/reservations.md of the service). */
	budget?: BudgetGuard;
}

/** Reserves the call's estimate when a budget guard is set; the options its llm_call is recorded with. */
async function guard(options: AiSdkMeteringOptions, params: unknown) {
	if (options.budget === undefined) return { reservation: undefined, recordWith: options };
	const { estimate, ttlSeconds } = options.budget;
	const reservation: Reservation = await options.client.reserve({
		agentKey: typeof options.agentKey === "function" ? options.agentKey() : options.agentKey,
		amount: typeof estimate === "function" ? estimate(params) : estimate,
		ttlSeconds,
	});
	const recordWith = { ...options, metadata: { ...options.metadata, reservation_id: reservation.id } };
	return { reservation, recordWith };
}

export function meteringMiddleware(options: AiSdkMeteringOptions): LanguageModelMiddleware {
	return {
		specificationVersion: "v4",
		async wrapGenerate({ doGenerate, model, params }) {
			const { reservation, recordWith } = await guard(options, params);
			let result: Awaited<ReturnType<typeof doGenerate>>;
			try {
				result = await doGenerate();
			} catch (error) {
				if (reservation) await releaseQuietly(options.client, reservation.id);
				throw error;
			}
			const usage = result.usage as UsageLike | undefined;
			await recordLlmCall(recordWith, {
				model: result.response?.modelId ?? model.modelId,
				provider: model.provider,
				...tokensOf(usage),
			});
			return result;
		},
		async wrapStream({ doStream, model, params }) {
			const { reservation, recordWith } = await guard(options, params);
			let result: Awaited<ReturnType<typeof doStream>>;
			try {
				result = await doStream();
			} catch (error) {
				if (reservation) await releaseQuietly(options.client, reservation.id);
				throw error;
			}
			let modelId: string | undefined;
			let recorded = false;
			const record = (usage: UsageLike | undefined) => {
				if (recorded) return Promise.resolve();
				recorded = true;
				return recordLlmCall(recordWith, {
					model: modelId ?? model.modelId,
					provider: model.provider,
					...tokensOf(usage),
					streamed: true,
				});
			};
			const stream = result.stream.pipeThrough(
				new TransformStream({
					async transform(part, controller) {
						if (part.type === "response-metadata" && part.modelId !== undefined) modelId = part.modelId;
						if (part.type === "finish") await record(part.usage as UsageLike);
						controller.enqueue(part);
					},
					// A stream that ends without a finish part still made a call.
					async flush() {
						await record(undefined);
					},
				}),
			);
			return { ...result, stream };
		},
	};
}
