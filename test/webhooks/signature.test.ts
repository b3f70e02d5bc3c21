import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { WebhookMessage } from "../../src/webhooks/messages";
import {
	captureQueue,
	consume,
	createEndpoint,
	dispatchFor,
	emitEvent,
	type ReceivedRequest,
	stubReceiver,
} from "./fixtures";

afterEach(() => {
	vi.restoreAllMocks();
});

/** A delivered event as its receiver saw it, with the endpoint's secret. */
async function deliverOne(answers: number[] = [200]) {
	const queue = captureQueue();
	let call = 0;
	const receiver = stubReceiver(() => new Response(null, { status: answers[call++] ?? 200 }));
	const endpoint = await createEndpoint({ events: ["payment.successful"] });
	const data = {
		payment_id: "pay_1",
		invoice_id: "inv_1",
		account_id: "acct_1",
		amount: 12.34,
		currency: "EUR",
	};
	const eventId = await emitEvent("payment.successful", data);
	let [message] = await dispatchFor(queue, endpoint.id);
	for (let i = 0; i < answers.length; i++) {
		await consume([{ ...(message as WebhookMessage), dueAt: Date.now() }]);
		message = queue.take()[0]?.body;
	}
	return { secret: endpoint.secret, eventId, data, received: receiver.received };
}

const hexOf = (secret: string, body: string) => createHmac("sha256", secret).update(body).digest("hex");

describe("delivery signatures", () => {
	it("signs the raw body with hex HMAC-SHA256 keyed by the secret string (checked with node:crypto)", async () => {
		const { secret, eventId, data, received } = await deliverOne();
		const [request] = received as [ReceivedRequest];
		expect(request.headers["content-type"]).toBe("application/json");
		expect(request.headers["x-webhook-signature"]).toBe(hexOf(secret, request.body));
		expect(request.headers["x-webhook-signature"]).not.toBe(hexOf(secret, `${request.body} `));
		expect(request.headers["x-webhook-event"]).toBe("payment.successful");
		expect(request.headers["x-webhook-id"]).toBe(eventId);
		expect(request.json).toEqual({
			id: eventId,
			event: "payment.successful",
			timestamp: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
			data,
		});
	});

	it("carries Standard Webhooks headers that the standardwebhooks library verifies", async () => {
		const { secret, eventId, received } = await deliverOne();
		const [request] = received as [ReceivedRequest];
		expect(request.headers["webhook-id"]).toBe(eventId);
		expect(Math.abs(Number(request.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
		expect(request.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);

		expect(new Webhook(secret).verify(request.body, request.headers)).toEqual(request.json);
		// Tampering with the body, or another endpoint's secret, fails verification.
		expect(() =>
			new Webhook(secret).verify(request.body.replace("12.34", "99.99"), request.headers),
		).toThrow();
		const other = await createEndpoint();
		expect(() => new Webhook(other.secret).verify(request.body, request.headers)).toThrow();
	});

	it("sends the same id and body on a retry, freshly signed", async () => {
		const { secret, received } = await deliverOne([500, 200]);
		const [first, retry] = received as [ReceivedRequest, ReceivedRequest];
		expect(received).toHaveLength(2);
		expect(retry.body).toBe(first.body);
		expect(retry.headers["webhook-id"]).toBe(first.headers["webhook-id"]);
		expect(retry.headers["x-webhook-signature"]).toBe(hexOf(secret, retry.body));
		expect(new Webhook(secret).verify(retry.body, retry.headers)).toEqual(first.json);
	});
});
