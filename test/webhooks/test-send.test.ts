import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { WEBHOOK_EVENT_KINDS } from "../../src/webhooks/outbox";
import { createKey, expectError, get, patch, post } from "../helpers";
import { captureQueue, consume, createEndpoint, deliveryRow, dispatchFor, stubReceiver } from "./fixtures";

afterEach(() => {
	vi.restoreAllMocks();
});

// The fields of `data` per kind, from the contract's table (§13).
const invoiceFields = [
	"invoice_id",
	"account_id",
	"subscription_id",
	"billing_period",
	"amount",
	"currency",
	"status",
	"collection",
];
const subscriptionFields = [
	"subscription_id",
	"account_id",
	"rate_plan_id",
	"rate_plan_version",
	"pending_rate_plan_id",
	"pending_plan_change",
	"agent_instance_ids",
	"status",
	"billing_currency",
];
const DATA_FIELDS: Record<(typeof WEBHOOK_EVENT_KINDS)[number], string[]> = {
	"invoice.created": invoiceFields,
	"invoice.paid": [...invoiceFields, "paid_at"],
	"invoice.voided": [...invoiceFields, "voided_at"],
	"payment.successful": ["payment_id", "invoice_id", "account_id", "amount", "currency", "kind", "paid_at"],
	"payment.failed": ["invoice_id", "account_id", "amount", "currency", "attempt", "next_attempt_at", "error"],
	"invoice.payment_failed": [...invoiceFields, "attempts"],
	"outcome.completed": [
		"outcome_id",
		"agent_key",
		"outcome_type",
		"value",
		"subscription_id",
		"account_id",
		"timestamp",
	],
	"subscription.created": subscriptionFields,
	"subscription.updated": subscriptionFields,
	"subscription.cancelled": subscriptionFields,
	"credit_note.created": ["credit_note_id", "invoice_id", "account_id", "amount", "currency"],
	"alert.triggered": [
		"alert_id",
		"account_id",
		"subscription_id",
		"type",
		"metric",
		"threshold",
		"value",
		"billing_period",
		"block",
	],
};

describe("POST /v1/webhooks/test", () => {
	it.each(WEBHOOK_EVENT_KINDS)("sends a signed sample %s at once, marked test, and logs it", async (kind) => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ events: ["invoice.created"] });
		// Another endpoint subscribed to the kind must not get the sample.
		const bystander = await createEndpoint({ events: [kind] });

		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: kind });
		expect(response.status).toBe(200);
		expect(response.body).toEqual({
			result: {
				delivered: true,
				status_code: 200,
				duration_ms: expect.any(Number),
				error: null,
				delivery_id: expect.stringMatching(/^dlv_/),
			},
		});
		expect(response.body.result.duration_ms).toBeGreaterThanOrEqual(0);

		const [request] = receiver.received;
		expect(receiver.received).toHaveLength(1);
		expect(request?.headers["x-webhook-event"]).toBe(kind);
		expect(request?.json).toMatchObject({ event: kind, test: true, id: expect.stringMatching(/^evt_/) });
		expect(Object.keys(request?.json.data).sort()).toEqual([...DATA_FIELDS[kind]].sort());

		const log = await get(`/v1/webhooks/${endpoint.id}/deliveries`);
		expect(log.body.deliveries).toEqual([
			{
				id: response.body.result.delivery_id,
				event_id: request?.json.id,
				event: kind,
				status: "succeeded",
				attempts: 1,
				last_status_code: 200,
				last_error: null,
				next_attempt_at: null,
				created_at: expect.any(String),
				delivered_at: expect.any(String),
			},
		]);
		expect(await dispatchFor(queue, bystander.id)).toEqual([]);
		expect(queue.sent).toEqual([]);
	});

	it("reports a failed send, records it failed and does not retry it", async () => {
		const queue = captureQueue();
		stubReceiver(() => new Response("nope", { status: 500 }));
		const endpoint = await createEndpoint();
		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.paid" });
		expect(response.status).toBe(200);
		expect(response.body.result).toMatchObject({
			delivered: false,
			status_code: 500,
			error: "http_status",
		});
		expect(await deliveryRow(response.body.result.delivery_id)).toMatchObject({
			status: "failed",
			attempts: 1,
		});
		expect(queue.sent).toEqual([]);
	});

	it("reports an unreachable receiver with a null status code", async () => {
		captureQueue();
		stubReceiver(() => {
			throw new TypeError("Network connection lost.");
		});
		const endpoint = await createEndpoint();
		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.paid" });
		expect(response.body.result).toMatchObject({ delivered: false, status_code: null });
		// A fixed class, never the runtime's words (test-send-errors.test.ts).
		expect(response.body.result.error).toBe("connection_failed");
	});

	it("answers 404 for an unknown webhook or one of the other environment", async () => {
		stubReceiver();
		expectError(
			await post("/v1/webhooks/test", { webhook_id: "whk_unknown", event: "invoice.paid" }),
			404,
			"not_found",
		);
		const testEndpoint = await createEndpoint({}, await createKey("admin", "test"));
		expectError(
			await post("/v1/webhooks/test", { webhook_id: testEndpoint.id, event: "invoice.paid" }),
			404,
			"not_found",
		);
	});

	it.each([
		["an event not among the kinds", { event: "invoice.deleted" }, "event"],
		["no event", { event: undefined }, "event"],
		["no webhook_id", { webhook_id: undefined }, "webhook_id"],
		["an unknown field", { data: {} }, "data"],
	])("answers 400 for %s", async (_, overrides, path) => {
		const endpoint = await createEndpoint();
		const response = await post("/v1/webhooks/test", {
			webhook_id: endpoint.id,
			event: "invoice.paid",
			...overrides,
		});
		expect(expectError(response, 400, "validation_error").details?.map((d) => d.path)).toContain(path);
	});
});

describe("POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/retry", () => {
	async function failedDelivery() {
		stubReceiver(() => new Response(null, { status: 503 }));
		const endpoint = await createEndpoint();
		const sent = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.created" });
		return { endpoint, deliveryId: sent.body.result.delivery_id as string };
	}

	it("makes a failed delivery pending and queues its next attempt now", async () => {
		const queue = captureQueue();
		const { endpoint, deliveryId } = await failedDelivery();
		const response = await post(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`);
		expect(response.status).toBe(200);
		expect(response.body).toMatchObject({
			id: deliveryId,
			status: "pending",
			attempts: 1,
			last_status_code: 503,
		});
		expect(Date.parse(response.body.next_attempt_at)).toBeLessThanOrEqual(Date.now());
		const [message] = queue.take();
		expect(message).toEqual({ body: { deliveryId, attempt: 2, dueAt: expect.any(Number) }, delaySeconds: 0 });

		// The queued attempt goes out with the same sample body, still marked test.
		const receiver = stubReceiver();
		await consume([message?.body as never]);
		expect(receiver.received[0]?.json.test).toBe(true);
		expect(await deliveryRow(deliveryId)).toMatchObject({
			status: "succeeded",
			attempts: 2,
			last_status_code: 200,
		});
	});

	it("does not schedule automatic retries for a test delivery that fails again", async () => {
		const queue = captureQueue();
		const { endpoint, deliveryId } = await failedDelivery();
		await post(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`);
		const [message] = queue.take();
		await consume([message?.body as never]);
		expect(queue.take()).toEqual([]);
		expect(await deliveryRow(deliveryId)).toMatchObject({ status: "failed", attempts: 2 });
	});

	it("answers 404 for an unknown delivery, endpoint, or a delivery of another endpoint", async () => {
		captureQueue();
		const { endpoint, deliveryId } = await failedDelivery();
		const other = await createEndpoint();
		expectError(await post(`/v1/webhooks/${endpoint.id}/deliveries/dlv_unknown/retry`), 404, "not_found");
		expectError(await post(`/v1/webhooks/whk_unknown/deliveries/${deliveryId}/retry`), 404, "not_found");
		expectError(await post(`/v1/webhooks/${other.id}/deliveries/${deliveryId}/retry`), 404, "not_found");
		const testAdmin = await createKey("admin", "test");
		expectError(
			await post(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`, undefined, { key: testAdmin }),
			404,
			"not_found",
		);
		expect((await deliveryRow(deliveryId)).status).toBe("failed");
	});

	it("answers 409 while the endpoint is disabled", async () => {
		const queue = captureQueue();
		const { endpoint, deliveryId } = await failedDelivery();
		await patch(`/v1/webhooks/${endpoint.id}`, { status: "disabled" });
		expectError(await post(`/v1/webhooks/${endpoint.id}/deliveries/${deliveryId}/retry`), 409, "conflict");
		expect(queue.sent).toEqual([]);
		expect((await deliveryRow(deliveryId)).status).toBe("failed");
	});
});

describe("the test environment", () => {
	it("stores test deliveries in the endpoint's environment", async () => {
		stubReceiver();
		const testAdmin = await createKey("admin", "test");
		const endpoint = await createEndpoint({}, testAdmin);
		const response = await post(
			"/v1/webhooks/test",
			{ webhook_id: endpoint.id, event: "invoice.paid" },
			{ key: testAdmin },
		);
		expect((await deliveryRow(response.body.result.delivery_id)).environment).toBe("test");
		const stored = await env.DB.prepare(
			"SELECT environment, test, dispatched_at FROM webhook_events WHERE id = ?",
		)
			.bind((await deliveryRow(response.body.result.delivery_id)).event_id)
			.first();
		expect(stored).toMatchObject({ environment: "test", test: 1 });
	});
});
