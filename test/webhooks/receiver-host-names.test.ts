import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { judgeReceiverUrl } from "../../src/webhooks/receiver-url";
import { expectError, get, patch, post } from "../helpers";
import { createEndpoint, RECEIVER_URL } from "./fixtures";

// Host names are judged as written, never looked up: a name that is local or special-use by its form alone is
// refused on create and PATCH, whatever a resolver would make of it (docs/webhooks.md#the-receiver-url).

const REFUSED: [string, RegExp][] = [
	["https://metadata/computeMetadata/v1/", /single-label/],
	["https://intranet/hooks", /single-label/],
	["http://metadata/hooks", /http:\/\//],
	["https://localhost./hooks", /ends with a dot/],
	["https://LOCALHOST./hooks", /ends with a dot/],
	["https://example.com./hooks", /ends with a dot/],
	["https://metadata.google.internal/computeMetadata/v1/", /under \.internal/],
	["https://api.localhost/hooks", /under \.localhost/],
	["https://localhost.localhost/hooks", /under \.localhost/],
	["https://printer.local/hooks", /under \.local,/],
	["https://router.localdomain/hooks", /under \.localdomain/],
	["https://nas.home.arpa/hooks", /under \.home\.arpa/],
	["https://receiver.test/hooks", /under \.test/],
	["https://x.invalid/hooks", /under \.invalid/],
	["https://hooks.example/hooks", /under \.example/],
	["https://HOOKS.Example/hooks", /under \.example/],
	["https://-.example.com/hooks", /not a valid host name/],
	["https://a-.example.com/hooks", /not a valid host name/],
	["https://xn--localhost-/hooks", /not a valid host name/],
	["https://xn--localhost-.com/hooks", /not a valid host name/],
	["https://under_score.example.com/hooks", /not a valid host name/],
	["https://ab--cd.example.com/hooks", /not a valid host name/],
	[`https://${"a".repeat(64)}.example.com/hooks`, /not a valid host name/],
];

const ACCEPTED = [
	"https://hooks.example.com/in",
	"https://a.b/in",
	"https://hooks.example.co.uk/in",
	"https://xn--bcher-kva.example.com/in",
	"https://localhost.example.com/in",
	"https://test.example.org/in",
	"https://internal.example.com/in",
	"https://my-service.example.net:8443/in",
];

async function endpointCount(): Promise<number> {
	const row = await env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoints").first<{ n: number }>();
	return row?.n ?? 0;
}

describe("judgeReceiverUrl: host names", () => {
	it.each(REFUSED)("refuses %s", (url, reason) => {
		for (const allowLocal of [true, false]) {
			const verdict = judgeReceiverUrl(url, { allowLocal });
			expect(verdict.ok).toBe(false);
			if (!verdict.ok) expect(verdict.reason).toMatch(reason);
		}
	});

	it.each(ACCEPTED)("accepts %s", (url) => {
		expect(judgeReceiverUrl(url, { allowLocal: false })).toEqual({ ok: true });
	});
});

describe("POST /v1/webhooks: host names", () => {
	it.each(REFUSED)("refuses %s with 400 and stores nothing", async (url, reason) => {
		const before = await endpointCount();
		const response = await post("/v1/webhooks", { url, events: ["invoice.created"] });
		const error = expectError(response, 400, "validation_error");
		expect(error.details).toEqual([{ path: "url", message: expect.stringMatching(reason) }]);
		expect(await endpointCount()).toBe(before);
	});

	it.each(ACCEPTED)("accepts %s", async (url) => {
		expect((await createEndpoint({ url })).url).toBe(url);
	});
});

describe("PATCH /v1/webhooks/{webhook_id}: host names", () => {
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

	it.each(ACCEPTED)("accepts %s", async (url) => {
		const endpoint = await createEndpoint();
		const response = await patch(`/v1/webhooks/${endpoint.id}`, { url });
		expect(response.status).toBe(200);
		expect(response.body.url).toBe(url);
	});
});
