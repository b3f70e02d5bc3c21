/**
 * MCP errors and tool schemas as clients read them (docs/mcp.md#results-and-errors): an error's text is the REST
 * error body's JSON, once, never "MCP error -32602: MCP error -32602: …"; and every property of every tool's input
 * schema has one JSON Schema `type` (a union is anyOf branches of one type each), which the MCP Inspector and
 * clients that read `type` as a string accept without warnings.
 */
import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, it } from "vitest";
import { inputSchemaOf, toolRoutes } from "../../src/mcp/tools";
import { ADMIN_KEY, call } from "../helpers";

const headers = { Accept: "application/json, text/event-stream", "MCP-Protocol-Version": "2025-06-18" };

async function connectedClient(): Promise<Client> {
	const transport = new StreamableHTTPClientTransport(new URL("https://billing.test/mcp"), {
		requestInit: { headers: { Authorization: `Bearer ${ADMIN_KEY}` } },
		fetch: (input, init) => exports.default.fetch(new Request(input, init)),
	});
	const client = new Client({ name: "edges-test", version: "1.0.0" });
	await client.connect(transport);
	return client;
}

describe("an unknown tool", () => {
	it("is a -32602 error whose message is the REST error body's JSON, once", async () => {
		const response = await call("POST", "/mcp", {
			body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "book_flight", arguments: {} } },
			headers,
		});
		expect(response.status).toBe(200);
		const { code, message, data } = response.body.error;
		expect(code).toBe(-32602);
		expect(message).not.toMatch(/MCP error/);
		const body = JSON.parse(message);
		expect(body).toEqual({
			error: {
				code: "validation_error",
				message: expect.stringContaining("Unknown tool: book_flight"),
				details: [{ path: "name", message: expect.stringContaining("tools/list") }],
				request_id: response.headers.get("X-Request-Id"),
			},
		});
		expect(data).toEqual(body);
	});

	it("reads with the official client's prefix once", async () => {
		const client = await connectedClient();
		try {
			const error = await client.callTool({ name: "book_flight", arguments: {} }).catch((e: Error) => e);
			expect(error).toBeInstanceOf(Error);
			const text = (error as Error).message;
			expect(text.match(/MCP error -32602:/g)).toHaveLength(1);
			expect(JSON.parse(text.replace(/^MCP error -32602: /, "")).error.code).toBe("validation_error");
		} finally {
			await client.close();
		}
	});
});

describe("a refused tool call", () => {
	it("is a result whose text is the REST error body's JSON, once", async () => {
		const client = await connectedClient();
		try {
			const result = await client.callTool({ name: "get_margins", arguments: {} });
			expect(result.isError).toBe(true);
			const [content] = result.content as { type: string; text: string }[];
			expect(content?.text).not.toMatch(/MCP error/);
			const body = JSON.parse(content?.text ?? "");
			expect(body.error).toMatchObject({ code: "validation_error" });
			expect(result.structuredContent).toEqual(body);
		} finally {
			await client.close();
		}
	});
});

/** Every schema inside `schema` that describes values (properties, items, additionalProperties, branches), with its path. */
function* subschemas(schema: unknown, path: string): Generator<[string, Record<string, unknown>]> {
	if (schema === null || typeof schema !== "object") return;
	const node = schema as Record<string, unknown>;
	yield [path, node];
	for (const [name, property] of Object.entries((node.properties as object) ?? {})) {
		yield* subschemas(property, `${path}.${name}`);
	}
	for (const key of ["items", "additionalProperties", "propertyNames"]) {
		if (typeof node[key] === "object") yield* subschemas(node[key], `${path}[${key}]`);
	}
	for (const key of ["anyOf", "oneOf", "allOf"]) {
		for (const [i, branch] of ((node[key] as unknown[]) ?? []).entries()) {
			yield* subschemas(branch, `${path}.${key}[${i}]`);
		}
	}
}

describe("tool input schemas", () => {
	it.each(toolRoutes.map((tool) => [tool.name, tool] as const))("%s: one type per property", (_, tool) => {
		const schema = inputSchemaOf(tool);
		expect(schema.type).toBe("object");
		for (const [path, node] of subschemas(schema, tool.name)) {
			if ("type" in node) expect(typeof node.type, `${path}: ${JSON.stringify(node.type)}`).toBe("string");
			else {
				// No type of its own: a union whose branches each have one.
				const branches = (node.anyOf ?? node.oneOf) as Record<string, unknown>[] | undefined;
				expect(branches, `${path} has no type`).toBeDefined();
				for (const branch of branches ?? []) expect(typeof branch.type, path).toBe("string");
			}
		}
	});

	it("keeps what metadata accepts: strings, numbers, booleans and null as values; the property one type", () => {
		const tool = toolRoutes.find((t) => t.name === "record_action");
		const metadata = (inputSchemaOf(tool as never).properties as Record<string, any>).metadata;
		// The property itself may be omitted rather than null, so it advertises one type (the Inspector's form).
		expect(metadata.type).toBe("object");
		expect(metadata.anyOf).toBeUndefined();
		expect(metadata.additionalProperties).toEqual({
			anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }],
		});
	});
});
