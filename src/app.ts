import { accountRoutes } from "./accounts/routes";
import { agentRoutes } from "./agents/routes";
import { alertRoutes } from "./alerts/routes";
import { assembleApp } from "./assemble-app";
import { auditRoutes } from "./audit/routes";
import { balanceRoutes } from "./balance/routes";
import { costRoutes } from "./costs/routes";
import { couponRoutes } from "./coupons/routes";
import { creditNoteRoutes } from "./credit-notes/routes";
import { creditRoutes } from "./credits/routes";
import { documentRoutes } from "./documents/routes";
import { eventRoutes } from "./events/routes";
import { exchangeRateRoutes } from "./exchange-rates/routes";
import { benchHop } from "./http/bench-routes";
import type { Router } from "./http/context";
import { gate } from "./http/gate";
import { healthRoutes } from "./http/health";
import { mountOpenApiDocument } from "./http/openapi-route";
import { singleQueryValues } from "./http/query";
import { newRouter } from "./http/router";
import { draftInvoiceRoutes } from "./invoicing/draft-routes";
import { invoiceRoutes } from "./invoicing/routes";
import { statementRoutes } from "./invoicing/statement-routes";
import { upcomingInvoiceRoutes } from "./invoicing/upcoming-routes";
import { apiKeyRoutes } from "./keys/routes";
import { mountMcp } from "./mcp/mount";
import { meteringRoutes } from "./metering/routes";
import { usageRoutes } from "./metering/usage-routes";
import { modelPriceRoutes } from "./model-prices/routes";
import { paymentRoutes } from "./payments/routes";
import { stripeWebhookRoutes } from "./payments/stripe/webhook-routes";
import { portalCreditNoteRoutes } from "./portal/credit-note-routes";
import { portalGate } from "./portal/gate";
import { portalRoutes } from "./portal/routes";
import { portalSessionRoutes } from "./portal/session-routes";
import { pricingRoutes } from "./pricing/routes";
import { planVersionRoutes } from "./pricing/version-routes";
import { reportRoutes } from "./reports/routes";
import { reservationRoutes } from "./reservations/routes";
import { changePlanRoutes } from "./subscriptions/change-plan-routes";
import { subscriptionRoutes } from "./subscriptions/routes";
import { webhookRoutes } from "./webhooks/routes";

/**
 * The whole service: every route, the document, the portal and MCP. index.ts builds it on the first request the
 * ingest app (ingest-app.ts) does not answer; tests and scripts build it directly.
 */
export function createApp(): Router {
	return assembleApp(newRouter(), {
		open(app) {
			mountOpenApiDocument(app, async () => {
				const { registerWebhookPayloads } = await import("./webhooks/openapi");
				registerWebhookPayloads(app.openAPIRegistry);
			});
			app.route("/", healthRoutes);
			// Stripe signs its events instead of sending a key: before /v1's gate (docs/payments.md).
			app.route("/", stripeWebhookRoutes);
			app.get("/healthz/hop", benchHop);
		},
		api: [
			apiKeyRoutes,
			agentRoutes,
			accountRoutes,
			statementRoutes,
			costRoutes,
			modelPriceRoutes,
			exchangeRateRoutes,
			reportRoutes,
			pricingRoutes,
			planVersionRoutes,
			subscriptionRoutes,
			changePlanRoutes,
			couponRoutes,
			upcomingInvoiceRoutes,
			invoiceRoutes,
			draftInvoiceRoutes,
			paymentRoutes,
			documentRoutes,
			creditNoteRoutes,
			creditRoutes,
			balanceRoutes,
			meteringRoutes,
			usageRoutes,
			eventRoutes,
			webhookRoutes,
			alertRoutes,
			reservationRoutes,
			portalSessionRoutes,
			auditRoutes,
		],
		after(app) {
			// The customer portal's API has its own gate: only portal tokens, never API keys (docs/portal.md).
			app.use("/portal/api/*", portalGate);
			app.use("/portal/api/*", singleQueryValues);
			app.route("/portal/api", portalRoutes);
			app.route("/portal/api", portalCreditNoteRoutes);

			// MCP: the same key, limits and permissions as /v1; each tool runs its /v1 route through this app.
			app.use("/mcp", gate);
			mountMcp(app);
		},
	});
}
