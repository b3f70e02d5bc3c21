/**
 * The customer portal's API, under /portal/api (docs/portal.md): read-only, for the session's account alone.
 * Every read goes through the domain verb its /v1 route uses, filtered to that account; an id of another
 * account answers 404 exactly like an unknown one.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { Alert } from "../alerts/routes";
import { CreditGrant } from "../credits/routes";
import { creditNotesOf } from "../documents/credit-notes-of";
import { invoicePdf } from "../documents/pdf";
import { sellerName } from "../documents/seller";
import { scopeOf } from "../http/context";
import { ErrorBody } from "../http/errors";
import { json } from "../http/openapi";
import { getInvoice, listInvoices } from "../invoicing/invoices";
import { Invoice, InvoiceParams } from "../invoicing/schemas";
import { notFound } from "../lib/errors";
import { RatedCharge, UsageLine } from "../metering/usage-routes";
import { listPayments } from "../payments/payments";
import { Payment } from "../payments/schemas";
import { pageOf, pageQuery, pageSchema } from "../schemas/pages";
import { newPortalRouter, type PortalEnv } from "./gate";
import { portalOverview } from "./overview";

const TAGS = ["Customer portal"];
const security = [{ portalToken: [] }];

const errorText: Record<number, string> = {
	400: "A validation error",
	401: "No portal token, or an unknown, expired or revoked one (API and SDK keys are refused too)",
	404: "Not found, or not this account's",
	429: "Over the session's rate limit",
	500: "Unexpected error",
};

/** The portal's error responses: it has no 403, since a token reads everything of its account or nothing. */
function portalErrors(...extra: (400 | 404)[]) {
	const statuses = [...new Set([401, 429, 500, ...extra])].sort();
	return Object.fromEntries(
		statuses.map((s) => [s, { description: errorText[s] ?? "Error", ...json(ErrorBody) }]),
	) as Record<number, { description: string; content: { "application/json": { schema: typeof ErrorBody } } }>;
}

const PortalSubscription = z
	.object({
		id: z.string().openapi({ example: "sub_01jd0000000000000000000000" }),
		rate_plan_id: z.string().openapi({ description: "The plan of the current billing period." }),
		rate_plan_name: z.string().openapi({ example: "Growth" }),
		status: z.enum(["active", "cancelled"]),
		started_at: z.string(),
		cancel_at: z.string().nullable(),
		cancelled_at: z.string().nullable(),
		billing_period: z.string().openapi({ example: "2026-11" }),
		period_start: z.string(),
		period_end: z.string().openapi({ description: "First instant of the next month." }),
		currency: z.string(),
		usage: z.array(UsageLine),
		charges: z.array(RatedCharge),
		amount_so_far: z.number().openapi({
			example: 313.77,
			description: "The period's amount so far, base fee included, as GET /v1/usage rates it.",
		}),
	})
	.openapi("PortalSubscription");

const PortalOverview = z
	.object({
		seller: z
			.string()
			.openapi({ example: "Agent Metering & Billing", description: "Who bills the account." }),
		account: z.object({
			id: z.string().openapi({ example: "acct_01jd0000000000000000000000" }),
			name: z.string().openapi({ example: "Acme" }),
			email: z.string().openapi({ example: "ap@acme.example" }),
			currency: z.string(),
		}),
		billing_period: z.string().openapi({ example: "2026-11", description: "The current billing period." }),
		subscriptions: z.array(PortalSubscription).openapi({
			description: "Subscriptions active in the current period (or cancelled during it).",
		}),
		alerts: z.array(Alert).openapi({ description: "Alerts and budgets of those subscriptions." }),
		credits: z.object({
			currency: z.string(),
			available: z.number().openapi({ description: "The remaining of the account's active grants." }),
			pending_usage: z.number().openapi({ description: "What this period has accrued so far." }),
			projected: z.number().openapi({ description: "available − pending_usage." }),
			grants: z.array(CreditGrant),
		}),
	})
	.openapi("PortalOverview");

const PortalInvoicesQuery = z.strictObject({
	...pageQuery,
	status: z.enum(["open", "paid", "void"]).optional(),
});
const PortalPaymentsQuery = z.strictObject(pageQuery);

export const portalRoutes = newPortalRouter();

portalRoutes.openapi(
	createRoute({
		method: "get",
		path: "/overview",
		operationId: "getPortalOverview",
		tags: TAGS,
		security,
		summary: "The account, its period so far, alerts and credits",
		responses: { 200: { description: "The overview", ...json(PortalOverview) }, ...portalErrors() },
	}),
	async (c) => {
		const overview = await portalOverview({
			env: c.env,
			scope: c.get("scope"),
			accountId: c.get("session").accountId,
			seller: sellerName(c.env),
		});
		return c.json(overview, 200);
	},
);

portalRoutes.openapi(
	createRoute({
		method: "get",
		path: "/invoices",
		operationId: "listPortalInvoices",
		tags: TAGS,
		security,
		summary: "The account's invoices, newest first",
		request: { query: PortalInvoicesQuery },
		responses: {
			200: { description: "Invoices", ...json(pageSchema("invoices", Invoice)) },
			...portalErrors(400),
		},
	}),
	async (c) => {
		const { limit, offset, status } = c.req.valid("query");
		const { items, total } = await listInvoices({
			...scopeOf(c),
			// Its own invoices and those it pays for its children (docs/account-hierarchies.md).
			filters: { account_or_payer_id: c.get("session").accountId, status, issued: true },
			limit,
			offset,
		});
		return c.json(pageOf("invoices", items, total, { limit, offset }), 200);
	},
);

/** The invoice if the session's account has or pays it; any other answers 404 like an unknown id. */
async function accountInvoice(c: Context<PortalEnv>, id: string) {
	const invoice = await getInvoice({ ...scopeOf(c), id });
	const accountId = c.get("session").accountId;
	const its = invoice.account_id === accountId || invoice.payer_account_id === accountId;
	// A draft is the operator's until it is finalized.
	if (!its || invoice.status === "draft") {
		throw notFound("invoice", id);
	}
	return invoice;
}

portalRoutes.openapi(
	createRoute({
		method: "get",
		path: "/invoices/{invoice_id}",
		operationId: "getPortalInvoice",
		tags: TAGS,
		security,
		summary: "One of the account's invoices",
		request: { params: InvoiceParams },
		responses: { 200: { description: "The invoice", ...json(Invoice) }, ...portalErrors(404) },
	}),
	async (c) => c.json(await accountInvoice(c, c.req.valid("param").invoice_id), 200),
);

portalRoutes.openapi(
	createRoute({
		method: "get",
		path: "/invoices/{invoice_id}/pdf",
		operationId: "getPortalInvoicePdf",
		tags: TAGS,
		security,
		summary: "One of the account's invoices as a PDF",
		description: "The same document as GET /v1/invoices/{invoice_id}/pdf.",
		request: { params: InvoiceParams },
		responses: {
			200: {
				description: "The invoice document",
				content: { "application/pdf": { schema: z.string().openapi({ format: "binary" }) } },
			},
			...portalErrors(404),
		},
	}),
	async (c) => {
		const invoice = await accountInvoice(c, c.req.valid("param").invoice_id);
		const bytes = await invoicePdf(invoice, c.env, await creditNotesOf(scopeOf(c), invoice));
		return c.body(bytes as Uint8Array<ArrayBuffer>, 200, {
			"Content-Type": "application/pdf",
			"Content-Disposition": `inline; filename="${invoice.number ?? invoice.id}.pdf"`,
		});
	},
);

portalRoutes.openapi(
	createRoute({
		method: "get",
		path: "/payments",
		operationId: "listPortalPayments",
		tags: TAGS,
		security,
		summary: "The account's payments, newest first",
		request: { query: PortalPaymentsQuery },
		responses: {
			200: { description: "Payments", ...json(pageSchema("payments", Payment)) },
			...portalErrors(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listPayments({
			...scopeOf(c),
			filters: { account_id: c.get("session").accountId },
			...query,
		});
		return c.json(pageOf("payments", items, total, query), 200);
	},
);
