import { createExecutionContext, createMessageBatch, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Env } from "../../src/env";
import worker from "../../src/index";
import { handleWebhookBatch } from "../../src/webhooks/consumer";
import { ADMIN_KEY, expectError, get, post } from "../helpers";
import {
	captureQueue,
	createEndpoint,
	deliveryRow,
	dispatchFor,
	emitEvent,
	RECEIVER_URL,
	stubReceiver,
} from "./fixtures";

// localhost, 127.0.0.1 and [::1] are receivers only where ALLOW_LOCAL_WEBHOOK_URLS is "true": `npm run dev` and
// these tests set it (vitest.config.ts), a deployment does not. Here the Worker runs as deployed, on the same
// storage, without the variable.

afterEach(() => {
	vi.restoreAllMocks();
});

const deployed = { ...env, ALLOW_LOCAL_WEBHOOK_URLS: undefined } as Env;

async function callDeployed(method: string, path: string, body?: unknown) {
	const ctx = createExecutionContext();
	const response = await worker.fetch(
		new Request(`https://billing.test${path}`, {
			method,
			headers: { Authorization: `Bearer ${ADMIN_KEY}`, "Content-Type": "application/json" },
			body: body === undefined ? undefined : JSON.stringify(body),
		}),
		deployed,
		ctx,
	);
	await waitOnExecutionContext(ctx);
	const text = await response.text();
	return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

const LOCAL_URLS = [
	"http://localhost:3000/hooks",
	"https://localhost/hooks",
	"HTTP://LOCALHOST:3000/hooks",
	"http://127.0.0.1:8787/hooks",
	"https://127.0.0.1/hooks",
	"http://[::1]:3000/hooks",
	"https://[::1]/hooks",
];

async function endpointCount(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoints").first<{ n: number }>();
	return row?.n ?? 0;
}

describe("local receivers where the Worker is deployed (no ALLOW_LOCAL_WEBHOOK_URLS)", () => {
	it.each(LOCAL_URLS)("POST refuses %s with 400 and stores nothing", async (url) => {
		const before = await endpointCount();
		const response = await callDeployed("POST", "/v1/webhooks", { url, events: ["invoice.created"] });
		const error = expectError(response, 400, "validation_error");
		expect(error.details).toEqual([{ path: "url", message: expect.stringMatching(/local development/) }]);
		expect(await endpointCount()).toBe(before);
	});

	it.each(LOCAL_URLS)("PATCH refuses %s with 400 and keeps the stored url", async (url) => {
		const endpoint = await createEndpoint();
		const response = await callDeployed("PATCH", `/v1/webhooks/${endpoint.id}`, { url });
		expect(expectError(response, 400, "validation_error").details?.map((d) => d.path)).toEqual(["url"]);
		expect((await get(`/v1/webhooks/${endpoint.id}`)).body.url).toBe(RECEIVER_URL);
	});

	it("still accepts a public receiver", async () => {
		const response = await callDeployed("POST", "/v1/webhooks", {
			url: "https://hooks.example.com/in",
			events: ["invoice.created"],
		});
		expect(response.status).toBe(201);
	});

	it("does not deliver to a local url stored where it was allowed, and logs why", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ url: "http://127.0.0.1:8787/hooks" });
		await emitEvent("invoice.created", { invoice_id: "inv_local", amount: 1, currency: "USD" });
		const [message] = await dispatchFor(queue, endpoint.id);
		if (!message) throw new Error("no delivery queued");
		const batch = createMessageBatch("webhook-deliveries", [
			{ id: "msg-local", timestamp: new Date(), attempts: 1, body: message },
		]);
		await handleWebhookBatch(batch, deployed);
		expect(receiver.spy).not.toHaveBeenCalled();
		const row = await deliveryRow(message.deliveryId);
		expect(row).toMatchObject({ attempts: 1, last_status_code: null });
		expect(row.last_error).toMatch(/^Not sent: .*local development/);
	});

	it("does not connect on a test send to a local url, and answers connection_failed", async () => {
		captureQueue();
		const receiver = stubReceiver();
		const endpoint = await createEndpoint({ url: "http://localhost:3000/hooks" });
		const response = await callDeployed("POST", "/v1/webhooks/test", {
			webhook_id: endpoint.id,
			event: "invoice.paid",
		});
		expect(response.status).toBe(200);
		expect(response.body.result).toEqual({
			delivered: false,
			status_code: null,
			duration_ms: 0,
			error: "connection_failed",
			delivery_id: expect.stringMatching(/^dlv_/),
		});
		expect(receiver.spy).not.toHaveBeenCalled();
	});
});

describe("local receivers in local development (ALLOW_LOCAL_WEBHOOK_URLS=true)", () => {
	it.each(LOCAL_URLS)("accepts %s", async (url) => {
		const response = await post("/v1/webhooks", { url, events: ["invoice.created"] });
		expect(response.status, JSON.stringify(response.body)).toBe(201);
	});
});
