import { auditRecordInsert, created } from "../audit/record";
import { getInScope, type WithEnv } from "../db/rows";
import { webhookDeliveries, webhookEndpoints, webhookEvents } from "../db/schema";
import { newId } from "../lib/ids";
import { nowIso, periodOf } from "../lib/time";
import { recordAttempt } from "./attempt";
import type { WebhookEventKind } from "./outbox";
import { receiverUrlRules } from "./receiver-url";
import { openWebhookSecret } from "./secret-box";
import { ATTEMPT_TIMEOUT_MS, postWebhook, type SendErrorClass } from "./send";

/** Made-up `data` shaped exactly like that of a real event of the kind (docs/webhooks.md#retries-the-delivery-log-and-test-sends). */
export function sampleEventData(kind: WebhookEventKind, now: string = nowIso()): Record<string, unknown> {
	const invoice = {
		invoice_id: newId("inv"),
		account_id: newId("acct"),
		subscription_id: newId("sub"),
		billing_period: periodOf(now),
		amount: 125.5,
		currency: "USD",
		collection: {
			provider: "manual",
			status: "none",
			attempts: 0,
			next_attempt_at: null,
			payment_intent_id: null,
			checkout_session_id: null,
			payment_url: null,
			last_error: null,
		},
	};
	const subscription = {
		subscription_id: newId("sub"),
		account_id: newId("acct"),
		rate_plan_id: newId("plan"),
		rate_plan_version: 1,
		pending_rate_plan_id: null,
		pending_plan_change: null,
		agent_instance_ids: ["support-bot-eu-1"],
		billing_currency: "USD",
	};
	switch (kind) {
		case "invoice.created":
			return { ...invoice, status: "open" };
		case "invoice.paid":
			return { ...invoice, status: "paid", paid_at: now };
		case "invoice.voided":
			return { ...invoice, status: "void", voided_at: now };
		case "payment.successful":
			return {
				payment_id: newId("pay"),
				invoice_id: invoice.invoice_id,
				account_id: invoice.account_id,
				amount: invoice.amount,
				currency: invoice.currency,
				kind: "payment",
				paid_at: now,
			};
		case "outcome.completed":
			return {
				outcome_id: newId("out"),
				agent_key: "support-bot-eu-1",
				outcome_type: "ticket_resolved",
				value: 1,
				subscription_id: subscription.subscription_id,
				account_id: subscription.account_id,
				timestamp: now,
			};
		case "subscription.created":
		case "subscription.updated":
			return { ...subscription, status: "active" };
		case "subscription.cancelled":
			return { ...subscription, status: "cancelled" };
		case "alert.triggered":
			return {
				alert_id: newId("alr"),
				account_id: subscription.account_id,
				subscription_id: subscription.subscription_id,
				type: "usage",
				metric: null,
				threshold: 800,
				value: 812.4,
				billing_period: periodOf(now),
				block: false,
			};
		case "credit_note.created":
			return {
				credit_note_id: newId("cn"),
				invoice_id: invoice.invoice_id,
				account_id: invoice.account_id,
				amount: 25,
				currency: invoice.currency,
			};
		case "payment.failed":
			return {
				invoice_id: invoice.invoice_id,
				account_id: invoice.account_id,
				amount: invoice.amount,
				currency: invoice.currency,
				attempt: 1,
				next_attempt_at: new Date(Date.parse(now) + 86_400_000).toISOString(),
				error: "Your card was declined.",
			};
		case "invoice.payment_failed":
			return {
				...invoice,
				status: "open",
				attempts: 4,
				collection: {
					...invoice.collection,
					provider: "stripe",
					status: "failed",
					attempts: 4,
					payment_intent_id: "pi_3Qx0000000000000",
					last_error: "Your card was declined.",
				},
			};
	}
}

export interface TestSendResult {
	delivered: boolean;
	status_code: number | null;
	duration_ms: number;
	/** A fixed class, never the runtime's error text (send.ts). */
	error: SendErrorClass | null;
	delivery_id: string;
}

/**
 * Sends a sample event to one endpoint at once and waits for the answer. It is recorded as a delivery with one
 * attempt and never retried automatically; the sample event is marked dispatched so no other endpoint gets it.
 */
export async function sendTestEvent({
	db,
	env,
	scope,
	webhookId,
	event,
	timeoutMs = ATTEMPT_TIMEOUT_MS,
}: WithEnv & {
	webhookId: string;
	event: WebhookEventKind;
	timeoutMs?: number;
}): Promise<TestSendResult> {
	const endpoint = await getInScope(db, scope, webhookEndpoints, "webhook endpoint", webhookId);

	const now = nowIso();
	const stored = { id: newId("evt"), event, createdAt: now, data: sampleEventData(event, now), test: true };
	const deliveryId = newId("dlv");
	await db.batch([
		db.insert(webhookEvents).values({ ...stored, environment: scope.environment, dispatchedAt: now }),
		db.insert(webhookDeliveries).values({
			id: deliveryId,
			environment: scope.environment,
			endpointId: endpoint.id,
			eventId: stored.id,
			event,
			status: "pending",
			// Claimed on creation: this request makes attempt 1 itself.
			attempts: 1,
			nextAttemptAt: new Date(Date.parse(now) + timeoutMs).toISOString(),
			createdAt: now,
		}),
		auditRecordInsert(db, scope, {
			action: "webhook_delivery.created",
			resourceId: deliveryId,
			changes: created({ endpoint_id: endpoint.id, event, test: true }),
		}),
	]);
	const secret = await openWebhookSecret(env, endpoint.id, endpoint.secret);
	const outcome = await postWebhook(
		{ url: endpoint.url, secret, rules: receiverUrlRules(env) },
		stored,
		timeoutMs,
	);
	await recordAttempt(
		db,
		env,
		{ id: deliveryId, endpointId: endpoint.id, attempt: 1, retryable: false },
		outcome,
	);
	return {
		delivered: outcome.delivered,
		status_code: outcome.statusCode,
		duration_ms: outcome.durationMs,
		error: outcome.errorClass,
		delivery_id: deliveryId,
	};
}
