/**
 * Vercel AI SDK: a language-model middleware that records every generation — `generateText`, `streamText`,
 * `generateObject`… — as an `llm_call` with the model, input and output tokens and, from your price table, its cost.
 *
 *   import { wrapLanguageModel } from "ai";
 *   const model = wrapLanguageModel({ model: openai("gpt-4o-mini"), middleware: meteringMiddleware({ client, agentKey, prices }) });
 *
 * A stream is recorded when it finishes (its `finish` part carries the usage).
 */
import type { LanguageModelMiddleware } from "ai";
import { type IntegrationOptions, recordLlmCall } from "./record.js";

export type { ModelPrice, PriceTable } from "./pricing.js";
export type { IntegrationOptions } from "./record.js";

type Tokens = number | { total?: number | undefined } | undefined;

/** Usage as language-model specification v4/v3 (`{total}` objects) or v2 (plain numbers) give it. */
function count(tokens: Tokens): number | undefined {
	const value = typeof tokens === "number" ? tokens : tokens?.total;
	return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

interface UsageLike {
	inputTokens?: Tokens;
	outputTokens?: Tokens;
}

export function meteringMiddleware(options: IntegrationOptions): LanguageModelMiddleware {
	return {
		specificationVersion: "v4",
		async wrapGenerate({ doGenerate, model }) {
			const result = await doGenerate();
			const usage = result.usage as UsageLike | undefined;
			await recordLlmCall(options, {
				model: result.response?.modelId ?? model.modelId,
				provider: model.provider,
				inputTokens: count(usage?.inputTokens),
				outputTokens: count(usage?.outputTokens),
			});
			return result;
		},
		async wrapStream({ doStream, model }) {
			const result = await doStream();
			let modelId: string | undefined;
			let recorded = false;
			const record = (usage: UsageLike | undefined) => {
				if (recorded) return Promise.resolve();
				recorded = true;
				return recordLlmCall(options, {
					model: modelId ?? model.modelId,
					provider: model.provider,
					inputTokens: count(usage?.inputTokens),
					outputTokens: count(usage?.outputTokens),
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
