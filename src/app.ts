import { HTTPException } from "hono/http-exception";
import { accountRoutes } from "./accounts/routes";
import { agentRoutes } from "./agents/routes";
import { alertRoutes } from "./alerts/routes";
import { auditContext } from "./audit/gate";
import { auditRoutes } from "./audit/routes";
import { balanceRoutes } from "./balance/routes";
import { costRoutes } from "./costs/routes";
import { couponRoutes } from "./coupons/routes";
import { creditNoteRoutes } from "./credit-notes/routes";
import { creditRoutes } from "./credits/routes";
import { documentRoutes } from "./documents/routes";
import { eventRoutes } from "./events/routes";
import { benchHop } from "./http/bench-routes";
import { jsonBody } from "./http/body";
import { refuseUnexpectedBody } from "./http/bodyless";
import { docsHeaders, docsPage } from "./http/docs";
import { ApiError, fromDomainError, statusOf } from "./http/errors";
import { gate } from "./http/gate";
import { healthRoutes } from "./http/health";
import { idempotency } from "./http/idempotency";
import { finishedDocument } from "./http/openapi-document";
import { singleQueryValues } from "./http/query";
import { newRouter } from "./http/router";
import { draftInvoiceRoutes } from "./invoicing/draft-routes";
import { invoiceRoutes } from "./invoicing/routes";
import { upcomingInvoiceRoutes } from "./invoicing/upcoming-routes";
import { apiKeyRoutes } from "./keys/routes";
import { DomainError } from "./lib/errors";
import { newId } from "./lib/ids";
import { mountMcp } from "./mcp/routes";
import { meteringRoutes } from "./metering/routes";
import { usageRoutes } from "./metering/usage-routes";
import { modelPriceRoutes } from "./model-prices/routes";
import { collectAfterInvoiceWrites } from "./payments/after-answer";
import { paymentRoutes } from "./payments/routes";
import { stripeWebhookRoutes } from "./payments/stripe/webhook-routes";
import { portalCreditNoteRoutes } from "./portal/credit-note-routes";
import { portalGate } from "./portal/gate";
import { portalRoutes } from "./portal/routes";
import { portalSessionRoutes } from "./portal/session-routes";
import { pricingRoutes } from "./pricing/routes";
import { reportRoutes } from "./reports/routes";
import { reservationRoutes } from "./reservations/routes";
import { subscriptionRoutes } from "./subscriptions/routes";
import { dispatchAfterOutboxWrites } from "./webhooks/dispatch";
import { registerWebhookPayloads } from "./webhooks/openapi";
import { webhookRoutes } from "./webhooks/routes";

export function createApp() {
	const app = newRouter();

	app.use("*", async (c, next) => {
		const requestId = c.req.header("X-Request-Id")?.slice(0, 100) || newId("req");
		c.set("requestId", requestId);
		c.header("X-Request-Id", requestId);
		await next();
	});

	// The document doc31 generates, finished once per isolate with what every operation shares.
	app.use("/v1/openapi.json", finishedDocument());

	app.route("/", healthRoutes);
	// Stripe signs its events instead of sending a key: before /v1's gate (docs/payments.md).
	app.route("/", stripeWebhookRoutes);
	app.get("/healthz/hop", benchHop);
	app.get("/docs", (c) => c.html(docsPage, 200, docsHeaders));
	app.doc31("/v1/openapi.json", {
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
	app.openAPIRegistry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer" });
	app.openAPIRegistry.registerComponent("securitySchemes", "portalToken", {
		type: "http",
		scheme: "bearer",
		description: "A customer portal token (pst_…), minted by POST /v1/accounts/{account_id}/portal-sessions.",
	});
	registerWebhookPayloads(app.openAPIRegistry);

	app.use("/v1/*", async (c, next) => (c.req.path === "/v1/openapi.json" ? next() : gate(c, next)));
	app.use("/v1/*", async (c, next) => (c.req.path === "/v1/openapi.json" ? next() : auditContext(c, next)));
	app.use("/v1/*", singleQueryValues);
	app.use("/v1/*", jsonBody);
	app.use("/v1/*", refuseUnexpectedBody(app));
	app.use("/v1/*", idempotency);
	app.use("/v1/*", dispatchAfterOutboxWrites);
	app.use("/v1/*", collectAfterInvoiceWrites);

	app.route("/v1", apiKeyRoutes);
	app.route("/v1", agentRoutes);
	app.route("/v1", accountRoutes);
	app.route("/v1", costRoutes);
	app.route("/v1", modelPriceRoutes);
	app.route("/v1", reportRoutes);
	app.route("/v1", pricingRoutes);
	app.route("/v1", subscriptionRoutes);
	app.route("/v1", couponRoutes);
	app.route("/v1", upcomingInvoiceRoutes);
	app.route("/v1", invoiceRoutes);
	app.route("/v1", draftInvoiceRoutes);
	app.route("/v1", paymentRoutes);
	app.route("/v1", documentRoutes);
	app.route("/v1", creditNoteRoutes);
	app.route("/v1", creditRoutes);
	app.route("/v1", balanceRoutes);
	app.route("/v1", meteringRoutes);
	app.route("/v1", usageRoutes);
	app.route("/v1", eventRoutes);
	app.route("/v1", webhookRoutes);
	app.route("/v1", alertRoutes);
	app.route("/v1", reservationRoutes);
	app.route("/v1", portalSessionRoutes);
	app.route("/v1", auditRoutes);

	// The customer portal's API has its own gate: only portal tokens, never API keys (docs/portal.md).
	app.use("/portal/api/*", portalGate);
	app.use("/portal/api/*", singleQueryValues);
	app.route("/portal/api", portalRoutes);
	app.route("/portal/api", portalCreditNoteRoutes);

	// MCP: the same key, limits and permissions as /v1; each tool runs its /v1 route through this app.
	app.use("/mcp", gate);
	mountMcp(app);

	app.notFound((c) => {
		throw new ApiError("not_found", `No route ${c.req.method} ${c.req.path}.`);
	});

	app.onError((err, c) => {
		const requestId = c.get("requestId") ?? newId("req");
		let error: ApiError;
		if (err instanceof ApiError) error = err;
		else if (err instanceof DomainError) error = fromDomainError(err);
		else if (err instanceof HTTPException && err.status === 415) {
			error = new ApiError(
				"unsupported_media_type",
				"Send the body as JSON with 'Content-Type: application/json'.",
			);
		} else if (err instanceof HTTPException && err.status === 400) {
			// Hono's validator says 400 only when a required JSON body is missing: bad JSON was answered earlier.
			error = new ApiError("validation_error", "This operation needs a JSON body.", {
				details: [{ path: "body", message: "Required." }],
			});
		} else {
			console.error(JSON.stringify({ requestId, error: String(err), stack: (err as Error)?.stack }));
			error = new ApiError(
				"internal_error",
				"Something went wrong on our side. Retry, or quote the request id.",
			);
		}
		for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
		c.header("X-Request-Id", requestId);
		return c.json(
			{
				error: {
					code: error.code,
					message: error.message,
					...(error.details ? { details: error.details } : {}),
					request_id: requestId,
				},
			},
			statusOf(error.code),
		);
	});

	return app;
}
