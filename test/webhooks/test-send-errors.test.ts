import { afterEach, describe, expect, it, vi } from "vitest";
import { get, post } from "../helpers";
import { captureQueue, createEndpoint, deliveryRow, stubReceiver } from "./fixtures";

// A test send answers delivered or not, the status code and a fixed class of error — never the runtime's own
// error text, which would tell an admin how a host or port on the service's network answers.

afterEach(() => {
	vi.restoreAllMocks();
});

const RUNTIME_TEXT = "connect ECONNREFUSED 10.1.2.3:6379 (internal-redis.corp)";

const FAILURES: [string, () => Response | Promise<Response>, number | null, string][] = [
	["an error status", () => new Response("upstream says no", { status: 502 }), 502, "http_status"],
	[
		"a redirect (not followed)",
		() => new Response(null, { status: 302, headers: { Location: "/x" } }),
		302,
		"http_status",
	],
	[
		"a refused connection",
		() => {
			throw new TypeError(RUNTIME_TEXT);
		},
		null,
		"connection_failed",
	],
	[
		"no answer in time",
		() => {
			throw new DOMException(`The operation was aborted due to timeout (${RUNTIME_TEXT})`, "TimeoutError");
		},
		null,
		"timeout",
	],
	[
		"a certificate the runtime does not trust",
		() => {
			throw new Error(`TLS peer's certificate is not trusted; reason = ${RUNTIME_TEXT}`);
		},
		null,
		"tls_error",
	],
];

describe("POST /v1/webhooks/test: what a failed send reports", () => {
	it.each(FAILURES)("after %s: a fixed class, no runtime text", async (_, answer, statusCode, errorClass) => {
		captureQueue();
		stubReceiver(answer);
		const endpoint = await createEndpoint();
		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.paid" });
		expect(response.status).toBe(200);
		expect(response.body).toEqual({
			result: {
				delivered: false,
				status_code: statusCode,
				duration_ms: expect.any(Number),
				error: errorClass,
				delivery_id: expect.stringMatching(/^dlv_/),
			},
		});
		const delivery = await get(`/v1/webhooks/${endpoint.id}/deliveries/${response.body.result.delivery_id}`);
		for (const body of [response.body, delivery.body]) {
			expect(JSON.stringify(body)).not.toMatch(/ECONNREFUSED|internal-redis|10\.1\.2\.3|upstream says no/);
		}
		expect(await deliveryRow(response.body.result.delivery_id)).toMatchObject({
			status: "failed",
			last_status_code: statusCode,
		});
	});

	it("reports a delivered send with no error", async () => {
		captureQueue();
		stubReceiver(() => new Response(null, { status: 204 }));
		const endpoint = await createEndpoint();
		const response = await post("/v1/webhooks/test", { webhook_id: endpoint.id, event: "invoice.paid" });
		expect(response.body.result).toMatchObject({ delivered: true, status_code: 204, error: null });
	});
});
