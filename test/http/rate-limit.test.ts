import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import { createKey, expectError, get } from "../helpers";

/** The app with lowered limits, as an operator would set them with the two variables. */
async function callWithLimits(key: string, limits: { api?: number; sdk?: number }, path = "/v1/agents") {
	const ctx = createExecutionContext();
	const response = await createApp().fetch(
		new Request(`https://billing.test${path}`, { headers: { Authorization: `Bearer ${key}` } }),
		{
			...env,
			RATE_LIMIT_API_PER_MINUTE: String(limits.api ?? 1000),
			RATE_LIMIT_SDK_PER_MINUTE: String(limits.sdk ?? 10000),
		},
		ctx,
	);
	await waitOnExecutionContext(ctx);
	const text = await response.text();
	return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : null };
}

/** Counting tests must not straddle two 60-second windows. */
async function awayFromWindowEdge() {
	const intoWindow = Date.now() % 60_000;
	if (intoWindow > 57_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 50));
}

describe("rate limits (§4)", () => {
	beforeEach(awayFromWindowEdge);

	it("reports the limit, what is left and the reset on every authenticated response", async () => {
		const key = await createKey("read-only");
		const first = await get("/v1/agents", { key });
		const second = await get("/v1/agents", { key });
		expect(first.headers.get("X-RateLimit-Limit")).toBe("1000");
		expect(Number(first.headers.get("X-RateLimit-Remaining"))).toBe(999);
		expect(Number(second.headers.get("X-RateLimit-Remaining"))).toBe(998);
		const reset = Number(first.headers.get("X-RateLimit-Reset"));
		const now = Date.now() / 1000;
		expect(reset).toBeGreaterThan(now);
		expect(reset).toBeLessThanOrEqual(now + 60);
		expect(reset % 60).toBe(0);
	});

	it("gives SDK keys the SDK limit", async () => {
		const key = await createKey("sdk");
		const response = await get("/v1/usage?agent_key=x", { key });
		expect(response.headers.get("X-RateLimit-Limit")).toBe("10000");
	});

	it("counts errors too, and answers 429 with Retry-After past the limit without running the request", async () => {
		const key = await createKey("read-write");
		const notFound = await callWithLimits(key, { api: 3 }, "/v1/agents/none");
		expect(notFound.status).toBe(404);
		expect(notFound.headers.get("X-RateLimit-Remaining")).toBe("2");
		await callWithLimits(key, { api: 3 });
		const last = await callWithLimits(key, { api: 3 });
		expect(last.status).toBe(200);
		expect(last.headers.get("X-RateLimit-Remaining")).toBe("0");

		const limited = await callWithLimits(key, { api: 3 });
		expect(limited.status).toBe(429);
		expect(limited.body.error.code).toBe("rate_limited");
		expect(limited.headers.get("X-RateLimit-Limit")).toBe("3");
		expect(limited.headers.get("X-RateLimit-Remaining")).toBe("0");
		const retryAfter = Number(limited.headers.get("Retry-After"));
		expect(retryAfter).toBeGreaterThanOrEqual(1);
		expect(retryAfter).toBeLessThanOrEqual(60);
	});

	it("limits each key on its own", async () => {
		const [a, b] = [await createKey("read-only"), await createKey("read-only")];
		await callWithLimits(a, { api: 1 });
		expect((await callWithLimits(a, { api: 1 })).status).toBe(429);
		expect((await callWithLimits(b, { api: 1 })).status).toBe(200);
	});

	it("does not count requests answered 401", async () => {
		const response = await get("/v1/agents", { key: "sk_api_unknown_unknown_unknown_0000" });
		expectError(response, 401, "unauthorized");
		expect(response.headers.get("X-RateLimit-Remaining")).toBeNull();
	});
});
