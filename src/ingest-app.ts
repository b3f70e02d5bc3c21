/**
 * What a new isolate answers before it loads the rest of the service: events (POST /v1/actions, /v1/outcomes and
 * their batches), usage (GET /v1/usage, /v1/usage/unbilled) and /healthz. Every other request goes to the whole
 * app (app.ts), imported on the first one: its routes build some 2,000 zod schemas, PDFs and MCP load more, and
 * an isolate that only meters never pays for them (docs/scaling.md#cold-start).
 *
 * This app loads no zod either: it is a plain Hono app with the same middlewares (assemble-app.ts). A plain event
 * or batch is answered by the fast path (metering/ingest-routes.ts) alone; any other body, and the usage routes,
 * run the handlers of their own route module (metering/routes.ts, usage-routes.ts), imported on first need and
 * run on the same request, so a request answers the same in either app. Each route's access is declared here
 * ahead of its module, which must declare the same (http/permissions.ts).
 */
import { Hono, type MiddlewareHandler } from "hono";
import { TrieRouter } from "hono/router/trie-router";
import { assembleApp } from "./assemble-app";
import { benchHop } from "./http/bench-routes";
import type { AppEnv } from "./http/context";
import { type Access, declareAccessAhead, READ, SDK_READ, SDK_WRITE } from "./http/permissions";
import { plainBatchFastPath, plainEventFastPath } from "./metering/ingest-routes";

export interface IngestApp {
	app: Hono<AppEnv>;
	/** Whether one of its routes answers this request: else the whole app must. */
	answers(request: Request): boolean;
}

/** A router of the whole app, as its module exports it. */
type LazyRouter = () => Promise<Hono<AppEnv>>;

const meteringRouter: LazyRouter = async () => (await import("./metering/routes")).meteringRoutes;
const usageRouter: LazyRouter = async () => (await import("./metering/usage-routes")).usageRoutes;

/**
 * Runs the handlers that `router` has for METHOD PATH (its middlewares, validators and handler, as Hono
 * composes them) on this request's context: what the whole app would run after the same /v1 middlewares.
 */
function runFrom(load: LazyRouter, method: string, path: string): MiddlewareHandler<AppEnv> {
	let handlers: MiddlewareHandler<AppEnv>[] | undefined;
	return async (c) => {
		handlers ??= (await load()).routes
			.filter((route) => route.method === method && route.path === path)
			.map((route) => route.handler as MiddlewareHandler<AppEnv>);
		const run = handlers;
		const dispatch = async (i: number): Promise<void> => {
			const handler = run[i];
			if (!handler) return;
			const res = await handler(c, () => dispatch(i + 1));
			if (res instanceof Response && !c.finalized) c.res = res;
		};
		await dispatch(0);
		return c.res;
	};
}

interface IngestRoute {
	method: "GET" | "POST";
	path: string;
	access: Access;
	/** Answers what it can without zod; else calls next. */
	fast?: MiddlewareHandler<AppEnv>;
	load: LazyRouter;
}

const ROUTES: readonly IngestRoute[] = [
	{
		method: "POST",
		path: "/actions",
		access: SDK_WRITE,
		fast: plainEventFastPath("action"),
		load: meteringRouter,
	},
	{
		method: "POST",
		path: "/outcomes",
		access: SDK_WRITE,
		fast: plainEventFastPath("outcome"),
		load: meteringRouter,
	},
	{
		method: "POST",
		path: "/actions/batch",
		access: SDK_WRITE,
		fast: plainBatchFastPath("action"),
		load: meteringRouter,
	},
	{
		method: "POST",
		path: "/outcomes/batch",
		access: SDK_WRITE,
		fast: plainBatchFastPath("outcome"),
		load: meteringRouter,
	},
	{ method: "GET", path: "/usage", access: SDK_READ, load: usageRouter },
	{ method: "GET", path: "/usage/unbilled", access: READ, load: usageRouter },
];

export function createIngestApp(): IngestApp {
	const api = new Hono<AppEnv>();
	for (const route of ROUTES) {
		declareAccessAhead(route.method, route.path, route.access);
		const rest = runFrom(route.load, route.method, route.path);
		if (route.fast) api.on(route.method, route.path, route.fast, rest);
		else api.on(route.method, route.path, rest);
	}
	const app = assembleApp(new Hono<AppEnv>(), {
		open(app) {
			// As http/health.ts answers it; that route (with its schema, for the document) is the whole app's.
			app.get("/healthz", (c) => c.json({ status: "ok" as const }, 200));
			app.get("/healthz/hop", benchHop);
		},
		api: [api],
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
