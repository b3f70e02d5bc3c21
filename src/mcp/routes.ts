/**
 * POST /mcp: the Model Context Protocol's Streamable HTTP transport, stateless, answering JSON rather than an
 * event stream. The gate in front of it authenticates and counts the request like any /v1 request (401, 429);
 * GET and DELETE answer 405 there, as the transport allows a server without sessions or server-sent streams.
 * See docs/mcp.md.
 */
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ErrorCode, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Context, Handler, Hono } from "hono";
import { MAX_BODY_BYTES } from "../http/body";
import type { AppEnv } from "../http/context";
import { invalidParams, mcpServer } from "./server";

const JSON_TYPE = /^application\/json\s*(;.*)?$/i;

function jsonRpcError(status: 400 | 413, code: number, message: string): Response {
	return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}

type ReadMessage = { message: unknown } | { refused: Response };

/**
 * The body as one JSON-RPC message, read here rather than by the transport so that each refusal has its
 * JSON-RPC code: not JSON → -32700 (parse error); JSON but not a message → -32600 (invalid request). A batch
 * (an array) is refused too: the transport's 2025-06-18 revision removed them, and one HTTP request is one call.
 */
async function readMessage(request: Request, text: () => Promise<string>): Promise<ReadMessage | undefined> {
	// Without a JSON body the transport answers itself (415).
	if (!JSON_TYPE.test(request.headers.get("Content-Type") ?? "")) return undefined;
	const tooLarge = () => ({
		refused: jsonRpcError(413, ErrorCode.InvalidRequest, "The request body is larger than 1 MiB."),
	});
	if (Number(request.headers.get("Content-Length") ?? "0") > MAX_BODY_BYTES) return tooLarge();
	const body = await text();
	if (body.length * 3 > MAX_BODY_BYTES && new TextEncoder().encode(body).byteLength > MAX_BODY_BYTES) {
		return tooLarge();
	}
	let parsed: unknown;
	try {
		parsed = JSON.parse(body);
	} catch {
		return { refused: jsonRpcError(400, ErrorCode.ParseError, "Parse error: the body is not valid JSON.") };
	}
	if (Array.isArray(parsed)) {
		return {
			refused: jsonRpcError(
				400,
				ErrorCode.InvalidRequest,
				"Invalid request: send one JSON-RPC message, not a batch.",
			),
		};
	}
	if (!JSONRPCMessageSchema.safeParse(parsed).success) {
		return {
			refused: jsonRpcError(
				400,
				ErrorCode.InvalidRequest,
				"Invalid request: the body is not a JSON-RPC 2.0 request, notification or response.",
			),
		};
	}
	return { message: parsed };
}

/** The headers set before the handler (request id, rate limit) on a response built outside Hono. */
function withGateHeaders(c: Context<AppEnv>, response: Response): Response {
	for (const [name, value] of c.res.headers) {
		if (name !== "content-type") response.headers.set(name, value);
	}
	return response;
}

/** The handler of POST /mcp (mounted by mount.ts); tool calls are dispatched through the same app. */
export function mcpHandler(app: Hono<AppEnv>): Handler<AppEnv> {
	return async (c) => {
		const read = await readMessage(c.req.raw, () => c.req.text());
		if (read && "refused" in read) return withGateHeaders(c, read.refused);
		const invalid = read ? invalidParams(read.message) : null;
		if (read && invalid) {
			const id = (read.message as { id: string | number }).id;
			return withGateHeaders(c, Response.json({ jsonrpc: "2.0", id, error: invalid }));
		}

		const authorization = c.req.header("Authorization") ?? "";
		const server = mcpServer(c.get("principal"), {
			fetch: (request) => app.fetch(request, c.env, c.executionCtx),
			origin: new URL(c.req.url).origin,
			authorization,
			requestId: c.get("requestId"),
		});
		const transport = new WebStandardStreamableHTTPServerTransport({
			sessionIdGenerator: undefined,
			enableJsonResponse: true,
			maxRequestBodySize: MAX_BODY_BYTES,
		});
		await server.connect(transport);
		try {
			const response = await transport.handleRequest(
				c.req.raw,
				read ? { parsedBody: read.message } : undefined,
			);
			return withGateHeaders(c, response);
		} finally {
			await server.close();
		}
	};
}
