/**
 * POST /mcp on the app. The transport, the server and the MCP SDK (its message schemas, its JSON Schema
 * validator) are imported on the first MCP request an isolate answers, not when the Worker starts: most isolates
 * only ever meter events, and would pay for them before their first answer (docs/scaling.md#cold-start).
 */
import type { Hono } from "hono";
import type { AppEnv } from "../http/context";
import { ANY_KEY, declareRouteAccess } from "../http/permissions";

// Every key may call it; the tools it lists and runs are each checked against their own route's access.
declareRouteAccess("POST /mcp", ANY_KEY);

export function mountMcp(app: Hono<AppEnv>): void {
	app.post("/mcp", async (c, next) => {
		const { mcpHandler } = await import("./routes");
		return mcpHandler(app)(c, next);
	});
}
