import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";
import { createKey } from "../helpers";
import { subscribe, uniqueKey } from "../subscriptions/fixtures";

/** The Worker's env with a D1 binding that counts every statement prepared and every batch or exec sent. */
function countingEnv() {
	const calls: string[] = [];
	const db = new Proxy(env.DB, {
		get(target, property) {
			const value = Reflect.get(target, property);
			if (typeof value !== "function") return value;
			return (...args: unknown[]) => {
				calls.push(String(property));
				return value.apply(target, args);
			};
		},
	});
	return { env: { ...env, DB: db }, calls };
}

async function sendAction(
	app: ReturnType<typeof createApp>,
	workerEnv: Env,
	sdkKey: string,
	agentKey: string,
) {
	const ctx = createExecutionContext();
	const response = await app.fetch(
		new Request("https://billing.test/v1/actions", {
			method: "POST",
			headers: { Authorization: `Bearer ${sdkKey}`, "Content-Type": "application/json" },
			body: JSON.stringify({ agent_key: agentKey, action_type: "llm_call", metadata: { tokens: 10 } }),
		}),
		workerEnv,
		ctx,
	);
	await waitOnExecutionContext(ctx);
	return response;
}

describe("the single-event hot path", () => {
	it("costs no D1 query once the key and the route are cached in the isolate", async () => {
		const agentKey = uniqueKey();
		const { subscription } = await subscribe([agentKey]);
		const sdkKey = await createKey("sdk");
		const app = createApp();

		const cold = countingEnv();
		expect((await sendAction(app, cold.env, sdkKey, agentKey)).status).toBe(201);
		expect(cold.calls.length).toBeGreaterThan(0);

		const warm = countingEnv();
		const response = await sendAction(app, warm.env, sdkKey, agentKey);
		expect(response.status).toBe(201);
		expect(((await response.json()) as { subscription_id: string }).subscription_id).toBe(subscription.id);
		expect(warm.calls).toEqual([]);
	});
});
