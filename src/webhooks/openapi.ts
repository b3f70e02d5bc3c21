/**
 * The `webhooks` section of the OpenAPI document: what a receiver gets for each event kind (docs/webhooks.md#what-a-delivery-looks-like) — the
 * envelope, its `data`, and the signature headers (webhooks/signing.ts). Kinds are documented as they are emitted:
 * a kind in WEBHOOK_EVENT_KINDS must have a payload here (the Record type says so), and a payload appears in the
 * document only once its kind is in WEBHOOK_EVENT_KINDS.
 */

import type { OpenAPIHono } from "@hono/zod-openapi";
import { z } from "@hono/zod-openapi";
import { Collection } from "../schemas/collection";
import { WEBHOOK_EVENT_KINDS, type WebhookEventKind } from "./outbox";

type DocumentedKind = WebhookEventKind | "invoice.voided" | "alert.triggered";

const Timestamp = z.string().openapi({ format: "date-time", example: "2026-11-21T10:00:00.000Z" });
const Period = z.string().openapi({ pattern: "^\\d{4}-(0[1-9]|1[0-2])$", example: "2026-11" });
const Currency = z.string().openapi({ pattern: "^[A-Z]{3}$", example: "USD" });
const id = (prefix: string) => z.string().openapi({ example: `${prefix}_01jd0000000000000000000000` });

const invoice = {
	invoice_id: id("inv"),
	account_id: id("acct"),
	subscription_id: id("sub"),
	billing_period: Period,
	amount: z.number().openapi({ example: 313.77 }),
	currency: Currency,
	collection: Collection.openapi({
		description:
			"How the invoice is being collected, as GET /v1/invoices/{id} showed it when the event happened.",
	}),
};
const InvoiceCreated = z
	.object({
		...invoice,
		status: z.enum(["open", "paid"]).openapi({
			description:
				"The status after prepaid credits were applied: paid when they paid the whole amount at once (then " +
				"invoice.paid follows), else open.",
		}),
	})
	.openapi("InvoiceCreatedData");
const InvoicePaid = z
	.object({ ...invoice, status: z.enum(["paid"]), paid_at: Timestamp })
	.openapi("InvoicePaidData");
const InvoiceVoided = z
	.object({ ...invoice, status: z.enum(["void"]), voided_at: Timestamp })
	.openapi("InvoiceVoidedData");
const PaymentSuccessful = z
	.object({
		payment_id: id("pay"),
		invoice_id: id("inv"),
		account_id: id("acct"),
		amount: z.number().openapi({ example: 313.77 }),
		currency: Currency,
		kind: z
			.enum(["payment"])
			.openapi({ description: "Always payment: a refund comes with credit_note.created." }),
		paid_at: Timestamp,
	})
	.openapi("PaymentSuccessfulData");
const OutcomeCompleted = z
	.object({
		outcome_id: id("out"),
		agent_key: z.string().openapi({ example: "lead-qualifier-eu-1" }),
		outcome_type: z.string().openapi({ example: "converted_lead" }),
		value: z.number().openapi({ example: 1200 }),
		subscription_id: id("sub")
			.nullable()
			.openapi({ description: "Null when no subscription covers the agent." }),
		account_id: id("acct").nullable(),
		timestamp: Timestamp,
	})
	.openapi("OutcomeCompletedData");
const subscription = (status: "active" | "cancelled") =>
	z.object({
		subscription_id: id("sub"),
		account_id: id("acct"),
		rate_plan_id: id("plan"),
		rate_plan_version: z.number().int().openapi({ example: 1 }),
		pending_rate_plan_id: id("plan").nullable().openapi({
			description: "The plan taking over at the next period, if a change is scheduled.",
			example: null,
		}),
		pending_plan_change: z
			.object({ rate_plan_id: id("plan"), version: z.number().int(), at: Timestamp })
			.nullable()
			.openapi({ description: "The plan and version taking over, and when; null when none.", example: null }),
		agent_instance_ids: z.array(z.string()).openapi({ example: ["lead-qualifier-eu-1"] }),
		status: z.enum([status]),
		billing_currency: Currency.openapi({ description: "The currency its invoices are in; never changes." }),
	});
const SubscriptionData = subscription("active").openapi("SubscriptionData");
const SubscriptionCancelled = subscription("cancelled").openapi("SubscriptionCancelledData");
const AlertTriggered = z
	.object({
		alert_id: id("alr"),
		account_id: id("acct"),
		subscription_id: id("sub"),
		type: z.enum(["usage", "margin"]).openapi({
			description:
				"usage: a quantity or amount reached the threshold; margin: the live margin fell below it.",
		}),
		metric: z.string().nullable().openapi({
			description:
				"The metric watched; null when the alert watches the amount so far (and for margin alerts).",
			example: "llm_calls",
		}),
		threshold: z.number().openapi({ example: 1000 }),
		value: z
			.number()
			.openapi({ example: 1002, description: "The value that crossed (margin: margin_percent)." }),
		billing_period: Period,
		block: z.boolean().openapi({ description: "Whether entitlements now answer allowed: false." }),
		revenue: z.number().optional().openapi({
			description: "Margin alerts: the period's revenue so far, as GET /v1/usage rates it.",
			example: 120.5,
		}),
		costs: z.number().optional().openapi({
			description: "Margin alerts: the period's costs so far, in the plan's currency.",
			example: 98.75,
		}),
		margin_percent: z.number().optional().openapi({
			description:
				"Margin alerts: (revenue − costs) / revenue × 100, half-up to 2 decimals; 0 without revenue.",
			example: 18.05,
		}),
	})
	.openapi("AlertTriggeredData");

const CreditNoteCreated = z
	.object({
		credit_note_id: id("cn"),
		invoice_id: id("inv"),
		account_id: id("acct"),
		amount: z.number().openapi({ example: 25 }),
		currency: Currency,
	})
	.openapi("CreditNoteCreatedData");

// Collection through Stripe (docs/payments.md#dunning).
const PaymentFailed = z
	.object({
		invoice_id: id("inv"),
		account_id: id("acct"),
		amount: z.number().openapi({ example: 313.77 }),
		currency: Currency,
		attempt: z.number().int().openapi({ description: "Failed attempts so far.", example: 1 }),
		next_attempt_at: Timestamp.nullable().openapi({ description: "The next retry; null after the last." }),
		error: z
			.string()
			.openapi({ description: "Stripe's decline message.", example: "Your card was declined." }),
	})
	.openapi("PaymentFailedData");
const InvoicePaymentFailed = z
	.object({
		...invoice,
		status: z.enum(["open"]),
		attempts: z.number().int().openapi({ description: "Failed attempts, the last included.", example: 4 }),
	})
	.openapi("InvoicePaymentFailedData");

const payloads: Record<DocumentedKind, { data: z.ZodType; summary: string }> = {
	"invoice.created": { data: InvoiceCreated, summary: "An invoice was generated" },
	"invoice.paid": { data: InvoicePaid, summary: "An invoice was paid" },
	"invoice.voided": { data: InvoiceVoided, summary: "An invoice was voided" },
	"payment.successful": { data: PaymentSuccessful, summary: "A payment was recorded" },
	"outcome.completed": { data: OutcomeCompleted, summary: "An agent reported an outcome" },
	"subscription.created": { data: SubscriptionData, summary: "A subscription was created" },
	"subscription.updated": { data: SubscriptionData, summary: "A subscription was changed" },
	"subscription.cancelled": { data: SubscriptionCancelled, summary: "A subscription was cancelled" },
	"alert.triggered": {
		data: AlertTriggered,
		summary: "Usage crossed an alert's threshold, or the live margin fell below a margin alert's",
	},
	"credit_note.created": { data: CreditNoteCreated, summary: "A credit note was issued on an invoice" },
	"payment.failed": { data: PaymentFailed, summary: "Stripe declined a payment of an invoice" },
	"invoice.payment_failed": {
		data: InvoicePaymentFailed,
		summary: "An invoice's collection failed: every retry was declined",
	},
};

const signatureHeaders = z.object({
	"X-Webhook-Signature": z.string().openapi({
		description: "Hex HMAC-SHA256 of the raw body, keyed with the UTF-8 bytes of the whole secret string.",
		example: "5d41402abc4b2a76b9719d911017c592f1b1c3f6b2d8e2f0a7c1c7b4a8e1d2c3",
	}),
	"X-Webhook-Event": z.string().openapi({ description: "The event kind.", example: "invoice.created" }),
	"X-Webhook-Id": z.string().openapi({
		description: "The event's id; retries carry the same one.",
		example: "evt_01jd0000000000000000000000",
	}),
	"webhook-id": z.string().openapi({
		description: "Standard Webhooks: the event's id.",
		example: "evt_01jd0000000000000000000000",
	}),
	"webhook-timestamp": z.string().openapi({
		description: "Standard Webhooks: the attempt's time in Unix seconds.",
		example: "1795255200",
	}),
	"webhook-signature": z.string().openapi({
		description:
			'Standard Webhooks: `v1,` + base64 HMAC-SHA256 of "{id}.{timestamp}.{body}", keyed with the base64-decoded part of the secret after `whsec_`.',
		example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=",
	}),
});

/** Registers one webhook per emitted event kind. */
export function registerWebhookPayloads(registry: OpenAPIHono["openAPIRegistry"]): void {
	const emitted = new Set<string>(WEBHOOK_EVENT_KINDS);
	for (const [kind, { data, summary }] of Object.entries(payloads)) {
		if (!emitted.has(kind)) continue;
		const envelope = z.object({
			id: id("evt").openapi({ description: "The event's id; retries carry the same one." }),
			event: z.enum([kind]),
			timestamp: Timestamp.openapi({ description: "When the event happened." }),
			data,
			test: z
				.literal(true)
				.optional()
				.openapi({ description: "Present only in samples sent by POST /v1/webhooks/test." }),
		});
		registry.registerWebhook({
			method: "post",
			path: kind,
			operationId: `on${kind
				.split(/[._]/)
				.map((w) => w.charAt(0).toUpperCase() + w.slice(1))
				.join("")}`,
			tags: ["Webhooks"],
			summary,
			description:
				`POSTed to every enabled endpoint of the environment subscribed to \`${kind}\`. Answer 2xx within 30 ` +
				"seconds; anything else is retried after 1 min, 5 min, 15 min, 1 h, 6 h and 24 h. 410 Gone disables " +
				"the endpoint.",
			request: {
				headers: signatureHeaders,
				body: { required: true, content: { "application/json": { schema: envelope } } },
			},
			responses: {
				200: { description: "Received (any 2xx status)." },
				410: { description: "Disable this endpoint." },
			},
		});
	}
}
