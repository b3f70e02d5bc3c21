/**
 * The MCP server of one request (the endpoint is stateless: no session outlives its HTTP request). It answers
 * initialize, tools/list with the tools the key may call, and tools/call by running the tool's REST operation.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
	CallToolRequestSchema,
	ErrorCode,
	InitializeRequestSchema,
	ListToolsRequestSchema,
	PingRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";
import type { Principal } from "../http/auth";
import { type Caller, callTool } from "./call";
import { findTool, inputSchemaOf, mayUseTool, toolRoutes } from "./tools";

const INSTRUCTIONS =
	"Metering and billing for AI agents. Before an expensive step, call check_entitlement, or reserve_budget to " +
	"hold its estimated cost; after it, record what was done with record_action (metadata.reservation_id settles " +
	"the hold; release_reservation gives it back when the step fails) and what was achieved with record_outcome. " +
	"Each tool runs the REST operation of the same name with your key, and answers its JSON.";

// The server validates JSON Schemas only for elicitation, which this server never asks for; without this, the
// SDK would build an Ajv instance (and compile formats) for every request.
const noSchemaValidation: jsonSchemaValidator = {
	getValidator() {
		throw new Error("This server does not validate JSON Schemas.");
	},
};

export function mcpServer(principal: Principal, caller: Caller): Server {
	const server = new Server(
		{ name: "agent-metering-billing", title: "Agent Metering & Billing", version: "1.0.0" },
		{ capabilities: { tools: {} }, instructions: INSTRUCTIONS, jsonSchemaValidator: noSchemaValidation },
	);

	server.setRequestHandler(ListToolsRequestSchema, () => ({
		tools: toolRoutes
			.filter((tool) => mayUseTool(principal, tool))
			.map((tool) => ({
				name: tool.name,
				title: tool.title,
				description: tool.description,
				inputSchema: inputSchemaOf(tool),
				annotations: {
					readOnlyHint: tool.readOnly,
					openWorldHint: false,
				},
			})),
	}));

	server.setRequestHandler(CallToolRequestSchema, (request) => {
		const tool = findTool(request.params.name);
		// An unknown tool is a protocol error (invalid params), as the MCP specification's tools page shows.
		if (!tool) throw unknownTool(request.params.name, caller.requestId);
		return callTool(tool, request.params.arguments ?? {}, caller);
	});

	return server;
}

/**
 * The JSON-RPC error (-32602) of an unknown tool. Its message is the REST error body's JSON, as a tool's refusal
 * is, and it is thrown as a plain error with a code: the SDK answers `error.message` as it is, where an McpError's
 * message already starts "MCP error -32602:" and a client adds that prefix a second time.
 */
function unknownTool(name: string, requestId: string): Error & { code: number; data: unknown } {
	const detail = "Not a tool of this server; tools/list lists the tools this key may call.";
	const body = {
		error: {
			code: "validation_error",
			message: `Unknown tool: ${name}.`,
			details: [{ path: "name", message: detail }],
			request_id: requestId,
		},
	};
	return Object.assign(new Error(JSON.stringify(body)), { code: ErrorCode.InvalidParams, data: body });
}

// The requests this server answers, each with the shape of its params.
const REQUEST_SCHEMAS = {
	initialize: InitializeRequestSchema,
	ping: PingRequestSchema,
	"tools/list": ListToolsRequestSchema,
	"tools/call": CallToolRequestSchema,
} as const;

/**
 * What is wrong with the params of a request this server answers, as a JSON-RPC error (-32602, invalid params), or
 * null when they are fine. Checked before the SDK sees the request: the SDK would call a bad shape an internal
 * error (-32603) and quote its validator's JSON as the message.
 */
export function invalidParams(message: unknown): { code: number; message: string } | null {
	if (typeof message !== "object" || message === null || !("id" in message) || !("method" in message))
		return null;
	const schema = REQUEST_SCHEMAS[message.method as keyof typeof REQUEST_SCHEMAS];
	const parsed = schema?.safeParse(message);
	if (!parsed || parsed.success) return null;
	const issue = parsed.error.issues[0];
	const path = issue?.path.length ? issue.path.join(".") : "params";
	return {
		code: ErrorCode.InvalidParams,
		message: `Invalid params: ${path} — ${issue?.message ?? "invalid"}`,
	};
}
