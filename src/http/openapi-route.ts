/**
 * GET /v1/openapi.json and GET /docs. The document is generated from the routes' definitions on its first request
 * and finished by openapi-document.ts, which is imported then, as is the docs page: neither is work a new isolate
 * should do before it answers its first event (docs/scaling.md#cold-start).
 */
import type { MiddlewareHandler } from "hono";
import type { Router } from "./context";

const info = (): Parameters<Router["doc31"]>[1] => ({
	openapi: "3.1.0",
	info: {
		title: "Agent Metering & Billing API",
		version: "1.0.0",
		description:
			"Meter what AI agents do and achieve, price it with rate plans, invoice it, and report margins.",
	},
	servers: [
		{
			url: "http://localhost:8787",
			description: "Local: `npm run dev` (wrangler dev on its default port)",
		},
		{
			url: "https://{host}",
			description: "A deployment of this Worker",
			variables: {
				host: {
					default: "metering.example.com",
					description: "The Worker's host: its custom domain or <name>.<account>.workers.dev",
				},
			},
		},
	],
	security: [{ bearer: [] }],
});

/**
 * Mounts the document and the docs page on `app`. `beforeFirstDocument` runs once, before the document is first
 * generated: what only the document needs (its webhook payload schemas) is registered then.
 */
export function mountOpenApiDocument(app: Router, beforeFirstDocument: () => Promise<void>): void {
	// Loaded on the first request (concurrent first requests share the load), then kept for the isolate's life.
	let finishing: Promise<MiddlewareHandler> | undefined;
	const load = async () => {
		const [{ finishedDocument }] = await Promise.all([import("./openapi-document"), beforeFirstDocument()]);
		return finishedDocument();
	};
	// The document doc31 generates, finished once per isolate with what every operation shares.
	app.use("/v1/openapi.json", async (c, next) => {
		finishing ??= load();
		return (await finishing)(c, next);
	});
	app.get("/docs", async (c) => {
		const { docsHeaders, docsPage } = await import("./docs");
		return c.html(docsPage, 200, docsHeaders);
	});
	app.doc31("/v1/openapi.json", info());
	app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
	app.openAPIRegistry.registerComponent("securitySchemes", "portalToken", {
		type: "http",
		scheme: "bearer",
		description: "A customer portal token (pst_…), minted by POST /v1/accounts/{account_id}/portal-sessions.",
	});
}
