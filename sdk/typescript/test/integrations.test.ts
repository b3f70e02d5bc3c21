import { AIMessage, AIMessageChunk, HumanMessage } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import { tool as langchainTool } from "@langchain/core/tools";
import { FakeListChatModel } from "@langchain/core/utils/testing";
import { generateText, streamText, wrapLanguageModel } from "ai";
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { MeteringClient } from "../src/client";
import { meteringMiddleware } from "../src/integrations/ai-sdk";
import { MeteringCallbackHandler } from "../src/integrations/langchain";
import { llmCost, llmCostText, toScaled } from "../src/integrations/pricing";
import { meterTool, meterTools } from "../src/integrations/tools";
import { providerId, splitTokens } from "../src/integrations/usage";
import { fakeFetch } from "./fake-fetch";

const prices = {
	"gpt-4o-mini": { inputPerMillionTokens: 0.15, outputPerMillionTokens: 0.6 },
	"claude-sonnet": { inputPerMillionTokens: "3", outputPerMillionTokens: "15" },
};

const clients: MeteringClient[] = [];
function setup() {
	const { fetch, requests } = fakeFetch();
	const client = new MeteringClient({
		apiKey: "sk_test_abc",
		baseUrl: "http://metering.test",
		fetch,
		flushOnExit: false,
	});
	clients.push(client);
	const sent = async () => {
		await client.flush();
		return requests.flatMap((r) => r.body.events);
	};
	return { client, sent };
}
afterEach(async () => {
	await Promise.all(clients.splice(0).map((c) => c.shutdown()));
});

const v4Usage = (input: number, output: number) => ({
	inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
	outputTokens: { total: output, text: output, reasoning: undefined },
});

describe("price table", () => {
	it("computes the cost in exact decimal, half-up at 12 places", () => {
		expect(llmCostText(prices, "gpt-4o-mini", 1200, 300)).toBe("0.00036");
		expect(llmCostText(prices, "claude-sonnet", 1_000_001, 3)).toBe("3.000048");
		// 0.1 + 0.2 in binary floating point is 0.30000000000000004; here it is exact.
		expect(
			llmCostText({ m: { inputPerMillionTokens: 0.1, outputPerMillionTokens: 0.2 } }, "m", 1e6, 1e6),
		).toBe("0.3");
		expect(llmCostText({ m: { inputPerMillionTokens: 1e-7, outputPerMillionTokens: 0 } }, "m", 5, 0)).toBe(
			"0.000000000001",
		);
		expect(llmCost(prices, "unknown-model", 10, 10)).toBeUndefined();
		expect(toScaled("1.0000000000005")).toBe(1_000_000_000_001n);
		expect(() => toScaled(-1)).toThrow(RangeError);
	});
});

describe("Vercel AI SDK middleware", () => {
	it("records a generation as an llm_call with model, tokens and cost, and passes the result through", async () => {
		const { client, sent } = setup();
		const model = wrapLanguageModel({
			model: new MockLanguageModelV4({
				modelId: "gpt-4o-mini",
				doGenerate: {
					content: [{ type: "text", text: "Hello!" }],
					finishReason: { unified: "stop", raw: "stop" },
					usage: v4Usage(1200, 300),
					warnings: [],
				},
			}),
			middleware: meteringMiddleware({ client, agentKey: "support-bot-1", prices, metadata: { run: "r1" } }),
		});
		const result = await generateText({ model, prompt: "Say hello" });
		expect(result.text).toBe("Hello!");
		expect(await sent()).toEqual([
			expect.objectContaining({
				agent_key: "support-bot-1",
				action_type: "llm_call",
				metadata: {
					run: "r1",
					model: "gpt-4o-mini",
					provider: "mock-provider",
					input_tokens: 1200,
					output_tokens: 300,
					tokens: 1500,
					cost: 0.00036,
				},
			}),
		]);
	});

	it("splits cache reads out of input and reasoning out of output, and names the provider by its id", async () => {
		const { client, sent } = setup();
		const model = wrapLanguageModel({
			model: new MockLanguageModelV4({
				provider: "openai.responses",
				modelId: "gpt-4o-mini",
				doGenerate: {
					content: [{ type: "text", text: "Thought about it." }],
					finishReason: { unified: "stop", raw: "stop" },
					usage: {
						inputTokens: { total: 1200, noCache: 150, cacheRead: 1000, cacheWrite: 50 },
						outputTokens: { total: 300, text: 200, reasoning: 100 },
					},
					warnings: [],
				},
			}),
			middleware: meteringMiddleware({ client, agentKey: "reasoner", prices }),
		});
		await generateText({ model, prompt: "Think" });
		expect((await sent())[0]?.metadata).toEqual({
			model: "gpt-4o-mini",
			provider: "openai",
			input_tokens: 200, // 150 uncached + 50 written to the cache
			cached_input_tokens: 1000,
			output_tokens: 200,
			reasoning_tokens: 100,
			tokens: 1500,
			cost: 0.00036, // the price table prices input and output as the framework counts them
		});
	});

	it("splits the tokens of a stream's finish part too", async () => {
		const { client, sent } = setup();
		const model = wrapLanguageModel({
			model: new MockLanguageModelV4({
				provider: "anthropic.messages",
				modelId: "claude-sonnet-4-5",
				doStream: {
					stream: convertArrayToReadableStream([
						{ type: "text-start", id: "t" },
						{ type: "text-delta", id: "t", delta: "Hi" },
						{ type: "text-end", id: "t" },
						{
							type: "finish",
							finishReason: { unified: "stop", raw: "stop" },
							usage: {
								inputTokens: { total: 5000, noCache: 1000, cacheRead: 4000, cacheWrite: 0 },
								outputTokens: { total: 800, text: 300, reasoning: 500 },
							},
						},
					]),
				},
			}),
			middleware: meteringMiddleware({ client, agentKey: "streamer" }),
		});
		expect(await streamText({ model, prompt: "x" }).text).toBe("Hi");
		expect((await sent())[0]?.metadata).toEqual({
			model: "claude-sonnet-4-5",
			provider: "anthropic",
			input_tokens: 1000,
			cached_input_tokens: 4000,
			output_tokens: 300,
			reasoning_tokens: 500,
			tokens: 5800,
			streamed: true,
		});
	});

	it("records a stream when it finishes, with the model the response names", async () => {
		const { client, sent } = setup();
		const model = wrapLanguageModel({
			model: new MockLanguageModelV4({
				modelId: "alias",
				doStream: {
					stream: convertArrayToReadableStream([
						{ type: "response-metadata", modelId: "claude-sonnet" },
						{ type: "text-start", id: "t" },
						{ type: "text-delta", id: "t", delta: "Hel" },
						{ type: "text-delta", id: "t", delta: "lo" },
						{ type: "text-end", id: "t" },
						{ type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: v4Usage(2000, 100) },
					]),
				},
			}),
			middleware: meteringMiddleware({ client, agentKey: () => "agent-from-fn", prices, currency: "EUR" }),
		});
		const result = streamText({ model, prompt: "Say hello" });
		expect(await result.text).toBe("Hello");
		const events = await sent();
		expect(events).toHaveLength(1);
		expect(events[0]).toMatchObject({
			agent_key: "agent-from-fn",
			action_type: "llm_call",
			metadata: {
				model: "claude-sonnet",
				input_tokens: 2000,
				output_tokens: 100,
				tokens: 2100,
				streamed: true,
				cost: 0.0075,
				cost_currency: "EUR",
			},
		});
	});

	it("records a model without a price, without a cost", async () => {
		const { client, sent } = setup();
		const model = wrapLanguageModel({
			model: new MockLanguageModelV4({
				modelId: "in-house-7b",
				doGenerate: {
					content: [{ type: "text", text: "ok" }],
					finishReason: { unified: "stop", raw: undefined },
					usage: v4Usage(10, 5),
					warnings: [],
				},
			}),
			middleware: meteringMiddleware({ client, agentKey: "a", prices }),
		});
		await generateText({ model, prompt: "x" });
		const [event] = await sent();
		expect(event?.metadata).toEqual({
			model: "in-house-7b",
			provider: "mock-provider",
			input_tokens: 10,
			output_tokens: 5,
			tokens: 15,
		});
	});
});

/**
 * LangChain's FakeListChatModel, answering as a provider that reports usage does: usage_metadata on the message
 * (on the last chunk when streaming) and the model's name in response_metadata.
 */
class FakeChatWithUsage extends FakeListChatModel {
	constructor(
		responses: string[],
		private readonly usage: {
			input_tokens: number;
			output_tokens: number;
			input_token_details?: { cache_read?: number };
			output_token_details?: { reasoning?: number };
		},
		private readonly modelName: string,
	) {
		super({ responses, generationInfo: { model_name: modelName } });
	}
	override _formatGeneration(text: string) {
		const usage_metadata = {
			...this.usage,
			total_tokens: this.usage.input_tokens + this.usage.output_tokens,
		};
		return {
			message: new AIMessage({
				content: text,
				usage_metadata,
				response_metadata: { model_name: this.modelName },
			}),
			text,
		};
	}
	override _createResponseChunk(text: string, generationInfo?: Record<string, unknown>) {
		const last = generationInfo !== undefined;
		const usage_metadata = {
			...this.usage,
			total_tokens: this.usage.input_tokens + this.usage.output_tokens,
		};
		return new ChatGenerationChunk({
			message: new AIMessageChunk({ content: text, ...(last ? { usage_metadata } : {}) }),
			text,
			generationInfo,
		});
	}
}

describe("token counts and provider ids", () => {
	it("split totals into uncached input, cached input, output and reasoning", () => {
		expect(splitTokens({ input: 100, output: 50, cacheRead: 30, reasoning: 20 })).toEqual({
			inputTokens: 70,
			cachedInputTokens: 30,
			outputTokens: 30,
			reasoningTokens: 20,
		});
		expect(splitTokens({ input: 100, output: 50 })).toEqual({ inputTokens: 100, outputTokens: 50 });
		expect(splitTokens({ input: 10, output: 5, cacheRead: 0, reasoning: 0 })).toEqual({
			inputTokens: 10,
			outputTokens: 5,
		});
		expect(splitTokens({ input: 10, cacheRead: 12 })).toEqual({
			inputTokens: 0,
			outputTokens: undefined,
			cachedInputTokens: 12,
		});
		expect(splitTokens({ input: -1, output: Number.NaN })).toEqual({
			inputTokens: undefined,
			outputTokens: undefined,
		});
	});

	it.each([
		["openai.chat", "openai"],
		["openai.responses", "openai"],
		["anthropic.messages", "anthropic"],
		["google.generative-ai", "google"],
		["google_genai", "google"],
		["google_vertexai", "google"],
		["mistralai", "mistral"],
		["mistral.chat", "mistral"],
		["deepseek.chat", "deepseek"],
		["xai.chat", "xai"],
		["OpenAI", "openai"],
	])("name %s by the id %s", (name, id) => {
		expect(providerId(name)).toBe(id);
	});
});

describe("LangChain.js callback handler", () => {
	it("records a chat model call with the tokens of its message", async () => {
		const { client, sent } = setup();
		const chat = new FakeChatWithUsage(["Sure."], { input_tokens: 1200, output_tokens: 300 }, "gpt-4o-mini");
		const handler = new MeteringCallbackHandler({ client, agentKey: "lc-agent", prices });
		const answer = await chat.invoke([new HumanMessage("Help me")], { callbacks: [handler] });
		expect(answer.content).toBe("Sure.");
		expect(await sent()).toEqual([
			expect.objectContaining({
				agent_key: "lc-agent",
				action_type: "llm_call",
				metadata: {
					model: "gpt-4o-mini",
					// Sent as a lower-case provider id, the way model prices name providers.
					provider: "fakelistchatmodel",
					input_tokens: 1200,
					output_tokens: 300,
					tokens: 1500,
					cost: 0.00036,
				},
			}),
		]);
	});

	it("records a streamed call once, with the usage of its chunks", async () => {
		const { client, sent } = setup();
		const chat = new FakeChatWithUsage(
			["Hello"],
			{ input_tokens: 2000, output_tokens: 100 },
			"claude-sonnet",
		);
		const handler = new MeteringCallbackHandler({ client, agentKey: "lc-agent", prices });
		let text = "";
		for await (const chunk of await chat.stream("Hi", { callbacks: [handler] })) text += chunk.content;
		expect(text).toBe("Hello");
		const events = await sent();
		expect(events).toHaveLength(1);
		expect(events[0]?.metadata).toMatchObject({
			model: "claude-sonnet",
			input_tokens: 2000,
			output_tokens: 100,
			cost: 0.0075,
		});
	});

	it("splits cache reads and reasoning out of the message's usage", async () => {
		const { client, sent } = setup();
		const chat = new FakeChatWithUsage(
			["Done."],
			{
				input_tokens: 1200,
				output_tokens: 300,
				input_token_details: { cache_read: 1024 },
				output_token_details: { reasoning: 120 },
			},
			"gpt-4o-mini",
		);
		const handler = new MeteringCallbackHandler({ client, agentKey: "lc-agent", prices });
		await chat.invoke("Plan it", { callbacks: [handler] });
		expect((await sent())[0]?.metadata).toMatchObject({
			model: "gpt-4o-mini",
			input_tokens: 176,
			cached_input_tokens: 1024,
			output_tokens: 180,
			reasoning_tokens: 120,
			tokens: 1500,
			cost: 0.00036,
		});
	});

	it("splits a streamed call's usage the same way", async () => {
		const { client, sent } = setup();
		const chat = new FakeChatWithUsage(
			["Hi"],
			{
				input_tokens: 50,
				output_tokens: 40,
				input_token_details: { cache_read: 10 },
				output_token_details: { reasoning: 30 },
			},
			"claude-sonnet",
		);
		const handler = new MeteringCallbackHandler({ client, agentKey: "lc-agent" });
		for await (const _ of await chat.stream("Hi", { callbacks: [handler] })) {
		}
		expect((await sent())[0]?.metadata).toMatchObject({
			input_tokens: 40,
			cached_input_tokens: 10,
			output_tokens: 10,
			reasoning_tokens: 30,
			tokens: 90,
		});
	});

	it("records one llm_call per call of a model that reports no usage", async () => {
		const { client, sent } = setup();
		const chat = new FakeListChatModel({ responses: ["one", "two"] });
		const handler = new MeteringCallbackHandler({
			client,
			agentKey: "lc-agent",
			metadata: { graph: "triage" },
		});
		await chat.invoke("a", { callbacks: [handler] });
		await chat.invoke("b", { callbacks: [handler] });
		const events = await sent();
		expect(events.map((e) => e.action_type)).toEqual(["llm_call", "llm_call"]);
		expect(events[0]?.metadata).toMatchObject({ graph: "triage" });
		expect(events[0]?.metadata).not.toHaveProperty("cost");
	});

	it("records tool runs as tool_calls, failed ones too", async () => {
		const { client, sent } = setup();
		const handler = new MeteringCallbackHandler({ client, agentKey: "lc-agent" });
		const weather = langchainTool(async ({ city }: { city: string }) => `Sunny in ${city}`, {
			name: "get_weather",
			description: "Weather of a city",
			schema: z.object({ city: z.string() }),
		});
		const broken = langchainTool(
			async () => {
				throw new Error("down");
			},
			{ name: "broken", description: "Fails", schema: z.object({}) },
		);
		expect(await weather.invoke({ city: "Paris" }, { callbacks: [handler] })).toBe("Sunny in Paris");
		await expect(broken.invoke({}, { callbacks: [handler] })).rejects.toThrow("down");
		const events = await sent();
		expect(
			events.map((e) => [
				e.action_type,
				(e.metadata as Record<string, unknown>).tool,
				(e.metadata as Record<string, unknown>).ok,
			]),
		).toEqual([
			["tool_call", "get_weather", true],
			["tool_call", "broken", false],
		]);
	});
});

describe("tool-call wrapper", () => {
	it("records each execution with its name, outcome and duration, and passes results and errors through", async () => {
		const { client, sent } = setup();
		const search = meterTool("web_search", async (query: string) => `results for ${query}`, {
			client,
			agentKey: "a",
		});
		const fail = meterTool(
			"flaky",
			() => {
				throw new Error("nope");
			},
			{ client, agentKey: "a" },
		);
		expect(await search("cats")).toBe("results for cats");
		await expect(fail()).rejects.toThrow("nope");
		const events = await sent();
		expect(events).toEqual([
			expect.objectContaining({
				action_type: "tool_call",
				metadata: { tool: "web_search", ok: true, duration_ms: expect.any(Number) },
			}),
			expect.objectContaining({
				action_type: "tool_call",
				metadata: { tool: "flaky", ok: false, duration_ms: expect.any(Number) },
			}),
		]);
	});

	it("wraps every execute of an AI SDK tool set, named by its key", async () => {
		const { client, sent } = setup();
		const tools = meterTools(
			{
				weather: {
					description: "Weather",
					execute: async ({ city }: { city: string }) => `Sunny in ${city}`,
				},
				noExecute: { description: "Client-side tool" },
			},
			{ client, agentKey: "a" },
		);
		expect(await tools.weather.execute({ city: "Oslo" })).toBe("Sunny in Oslo");
		expect(tools.noExecute).toEqual({ description: "Client-side tool" });
		const events = await sent();
		expect(events.map((e) => (e.metadata as Record<string, unknown>).tool)).toEqual(["weather"]);
	});
});
