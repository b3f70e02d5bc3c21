/**
 * Tool calls: wrap a function (or every tool of a Vercel AI SDK tool set) so that each execution records a
 * `tool_call` action with the tool's name, whether it succeeded and how long it took. The function's result and
 * errors pass through unchanged.
 *
 *   const search = meterTool("web_search", searchTheWeb, { client, agentKey });
 *   const tools = meterTools({ weather, search }, { client, agentKey });   // AI SDK tools: each execute wrapped
 */
import { type IntegrationOptions, recordToolCall } from "./record.js";

export type { IntegrationOptions } from "./record.js";

export function meterTool<Args extends unknown[], Result>(
	name: string,
	fn: (...args: Args) => Result | Promise<Result>,
	options: IntegrationOptions,
): (...args: Args) => Promise<Result> {
	return async (...args: Args) => {
		const started = Date.now();
		try {
			const result = await fn(...args);
			await recordToolCall(options, name, true, Date.now() - started);
			return result;
		} catch (error) {
			await recordToolCall(options, name, false, Date.now() - started);
			throw error;
		}
	};
}

/** Every tool with an `execute` gets it wrapped by meterTool, named by its key in the set. */
export function meterTools<Tools extends Record<string, object>>(
	tools: Tools,
	options: IntegrationOptions,
): Tools {
	const metered: Record<string, object> = {};
	for (const [name, tool] of Object.entries(tools)) {
		const execute = (tool as { execute?: (...args: unknown[]) => unknown }).execute;
		metered[name] =
			typeof execute === "function" ? { ...tool, execute: meterTool(name, execute, options) } : tool;
	}
	return metered as Tools;
}
