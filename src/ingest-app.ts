/**
 * What a new isolate answers before it loads the rest of the service: events (POST /v1/actions, /v1/outcomes and
 * their batches), usage (GET /v1/usage, /v1/usage/unbilled) and /healthz. Every other request goes to the whole
 * app (app.ts), imported on the first one: its routes build some 2,000 zod schemas, PDFs and MCP load more, and
 * an isolate that only meters never pays for them (docs/scaling.md#cold-start).
 *
 * Both apps are assembled alike (assemble-app.ts) from the same route modules, so a request answers the same in
 * either; this one only takes the requests its routes match, before any middleware runs.
 */
import { TrieRouter } from "hono/router/trie-router";
import { assembleApp } from "./assemble-app";
import { benchHop } from "./http/bench-routes";
import type { Router } from "./http/context";
import { healthRoutes } from "./http/health";
import { meteringRoutes } from "./metering/routes";
import { usageRoutes } from "./metering/usage-routes";

export interface IngestApp {
	app: Router;
	/** Whether one of its routes answers this request: else the whole app must. */
	answers(request: Request): boolean;
}

export function createIngestApp(): IngestApp {
	const app = assembleApp({
		open(app) {
			app.route("/", healthRoutes);
			app.get("/healthz/hop", benchHop);
		},
		api: [meteringRoutes, usageRoutes],
	});
	// The operations mounted above (not the middlewares, which every path has), matched as Hono matches them.
	const routes = new TrieRouter<true>();
	for (const route of app.routes) {
		if (route.method !== "ALL") routes.add(route.method, route.path, true);
	}
	return {
		app,
		answers(request) {
			const path = new URL(request.url).pathname;
			return routes.match(request.method, path)[0].length > 0;
		},
	};
}
