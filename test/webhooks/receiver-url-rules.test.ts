import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { expectError, get, patch, post } from "../helpers";
import {
	captureQueue,
	consume,
	createEndpoint,
	deliveryRow,
	dispatchFor,
	emitEvent,
	RECEIVER_URL,
	stubReceiver,
} from "./fixtures";

// The receiver-url rules as the API applies them: on create and PATCH (400, nothing stored), and again before
// every send, for endpoints stored before the rules existed.

afterEach(() => {
	vi.restoreAllMocks();
});

const ACCEPTED = [
	"https://hooks.example.com:8443/a?b=c",
	"https://93.184.216.34/hooks",
	"https://[2606:4700:4700::1111]/hooks",
	"http://localhost:3000/hooks",
	"http://127.0.0.1:8787/hooks",
	"http://[::1]:3000/hooks",
	"https://localhost/hooks",
];

const REFUSED: [string, RegExp][] = [
	["https://169.254.169.254/latest/meta-data/", /169\.254\.169\.254 is a link-local address/],
	["https://10.0.0.1/hooks", /10\.0\.0\.1 is a private address/],
	["https://172.16.5.4/hooks", /private address/],
	["https://192.168.0.10/hooks", /private address/],
	["https://100.64.0.1/hooks", /private address/],
	["https://127.0.0.2/hooks", /loopback address/],
	["https://0.0.0.0/hooks", /unspecified address/],
	["https://224.0.0.1/hooks", /multicast address/],
	["https://255.255.255.255/hooks", /reserved address/],
	["https://198.51.100.7/hooks", /documentation address/],
	["https://[fd00::1]/hooks", /private address/],
	["https://[fe80::1]/hooks", /link-local address/],
	["https://[::ffff:169.254.169.254]/hooks", /link-local address/],
	["https://[64:ff9b::a00:1]/hooks", /private address/],
	["https://[::]/hooks", /unspecified address/],
	["https://[0::1]/hooks", /loopback address/],
	["https://2130706433/hooks", /four decimal numbers/],
	["https://0x7f.1/hooks", /four decimal numbers/],
	["https://017700000001/hooks", /four decimal numbers/],
	["https://127.1/hooks", /four decimal numbers/],
	["https:example.com/hooks", /absolute/],
	["https:///example.com/hooks", /host right after/],
	["https://user:pw@example.com/hooks", /user name or password/],
	["https://example.com\\hooks", /backslashes/],
	["https://example.com/ hooks", /spaces/],
	["http://example.com/hooks", /Plain http:\/\//],
	["http://10.0.0.1/hooks", /Plain http:\/\//],
];

async function endpointCount(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoints").first<{ n: number }>();
	return row?.n ?? 0;
}

describe("POST /v1/webhooks: the receiver url", () => {
	it.each(ACCEPTED)("accepts %s", async (url) => {
		expect((await createEndpoint({ url })).url).toBe(url);
	});

	it.each(REFUSED)("refuses %s with 400 and stores nothing", async (url, reason) => {
		const before = await endpointCount();
		const response = await post("/v1/webhooks", { url, events: ["invoice.created"] });
		const error = expectError(response, 400, "validation_error");
		expect(error.details).toEqual([{ path: "url", message: expect.stringMatching(reason) }]);
		expect(await endpointCount()).toBe(before);
	});
});

describe("PATCH /v1/webhooks/{webhook_id}: the receiver url", () => {
	it.each(ACCEPTED)("accepts %s", async (url) => {
		const endpoint = await createEndpoint();
		const response = await patch(`/v1/webhooks/${endpoint.id}`, { url });
		expect(response.status).toBe(200);
		expect(response.body.url).toBe(url);
	});

	it.each(REFUSED)("refuses %s with 400 and keeps the stored url", async (url, reason) => {
		const endpoint = await createEndpoint();
		const response = await patch(`/v1/webhooks/${endpoint.id}`, { url, description: "moved" });
		const error = expectError(response, 400, "validation_error");
		expect(error.details).toEqual([{ path: "url", message: expect.stringMatching(reason) }]);
		expect((await get(`/v1/webhooks/${endpoint.id}`)).body).toMatchObject({
			url: RECEIVER_URL,
			description: null,
		});
	});
});

/** An endpoint whose url was stored before the rules, written straight into D1. */
async function endpointStoredWith(url: string, events: string[] = ["invoice.created"]) {
	const endpoint = await createEndpoint({ events });
	await env.DB.prepare("UPDATE webhook_endpoints SET url = ? WHERE id = ?").bind(url, endpoint.id).run();
	return endpoint;
}

describe("sending to a stored url the rules refuse", () => {
	it("does not connect on a delivery, and logs why", async () => {
		const queue = captureQueue();
		const receiver = stubReceiver();
		const endpoint = await endpointStoredWith("https://169.254.169.254/latest/meta-data/");
		await emitEvent("invoice.created", { invoice_id: "inv_ssrf", amount: 1, currency: "USD" });
		const [message] = await dispatchFor(queue, endpoint.id);
		if (!message) throw new Error("no delivery queued");

		await consume([message]);
		expect(receiver.spy).not.toHaveBeenCalled();
		const row = await deliveryRow(message.deliveryId);
		expect(row).toMatchObject({ attempts: 1, last_status_code: null });
		expect(row.last_error).toMatch(/^Not sent: The url's host 169\.254\.169\.254 is a link-local address/);
	});

	it("does not connect on a test send, answers connection_failed and logs why", async () => {
		captureQueue();
		const receiver = stubReceiver();
		const endpoint = await endpointStoredWith("https://0x7f.1/hooks");
		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.paid" });
		expect(response.status).toBe(200);
		expect(response.body.result).toMatchObject({
			delivered: false,
			status_code: null,
			error: "connection_failed",
		});
		expect(receiver.spy).not.toHaveBeenCalled();
		expect(await deliveryRow(response.body.result.delivery_id)).toMatchObject({
			status: "failed",
			last_error: expect.stringMatching(/^Not sent: .*four decimal numbers/),
		});
	});
});
