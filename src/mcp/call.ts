/**
 * Runs a tool by sending its REST request through the app itself, with the caller's key and request id: the
 * same validation, permission, storage and answer as REST, with nothing re-implemented. The request is marked as
 * counted already, since the MCP request that carries the call was counted against the key's rate limit.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { alreadyCounted } from "../http/gate";
import type { ToolRoute } from "./tools";

export interface Caller {
	/** The app's fetch (app.fetch bound to the Worker's env and execution context). */
	fetch: (request: Request) => Response | Promise<Response>;
	origin: string;
	authorization: string;
	requestId: string;
}

// A query parameter is one value: scalars as written; anything else as JSON, for the route to refuse with 400.
function queryValue(value: unknown): string {
	return typeof value === "string" || typeof value === "number" || typeof value === "boolean"
		? String(value)
		: JSON.stringify(value);
}

const PATH_PARAMETER = /\{([a-z_]+)\}/g;

/** The tool's path with its parameters (e.g. `{reservation_id}`) filled from the arguments, and what is left. */
function fillPath(
	tool: ToolRoute,
	args: Record<string, unknown>,
): { path: string; rest: Record<string, unknown> } | { missing: string } {
	const rest = { ...args };
	let missing: string | null = null;
	const path = tool.path.replace(PATH_PARAMETER, (_, name: string) => {
		const value = rest[name];
		delete rest[name];
		if (typeof value !== "string" || value === "") missing ??= name;
		return encodeURIComponent(String(value));
	});
	return missing === null ? { path, rest } : { missing };
}

function restRequest(tool: ToolRoute, path: string, args: Record<string, unknown>, caller: Caller): Request {
	const url = new URL(path, caller.origin);
	const headers: Record<string, string> = {
		Authorization: caller.authorization,
		"X-Request-Id": caller.requestId,
	};
	if (tool.method === "GET") {
		for (const [name, value] of Object.entries(args)) {
			if (value !== undefined) url.searchParams.set(name, queryValue(value));
		}
		return new Request(url, { method: "GET", headers });
	}
	headers["Content-Type"] = "application/json";
	return new Request(url, { method: tool.method, headers, body: JSON.stringify(args) });
}

/** The REST answer as a tool result: its JSON as text and as structured content; an error status sets isError. */
export async function callTool(
	tool: ToolRoute,
	args: Record<string, unknown>,
	caller: Caller,
): Promise<CallToolResult> {
	const filled = fillPath(tool, args);
	// A path parameter is a string REST reads from the URL; without one there is no request to send.
	if ("missing" in filled) return missingParameter(filled.missing, caller.requestId);
	const response = await caller.fetch(alreadyCounted(restRequest(tool, filled.path, filled.rest, caller)));
	const text = await response.text();
	const result: CallToolResult = { content: [{ type: "text", text }] };
	try {
		const body: unknown = JSON.parse(text);
		if (body !== null && typeof body === "object" && !Array.isArray(body)) {
			result.structuredContent = body as Record<string, unknown>;
		}
	} catch {
		// Every route answers JSON; should one not, the text alone is the answer.
	}
	if (!response.ok) result.isError = true;
	return result;
}

/** The 400 body REST answers for a missing or malformed parameter, as a tool error. */
function missingParameter(name: string, requestId: string): CallToolResult {
	const message = "Required: a non-empty string.";
	const body = {
		error: {
			code: "validation_error",
			message: `Invalid path: ${name} — ${message}`,
			details: [{ path: name, message }],
			request_id: requestId,
		},
	};
	return { content: [{ type: "text", text: JSON.stringify(body) }], structuredContent: body, isError: true };
}
