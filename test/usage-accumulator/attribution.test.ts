import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { rememberRoute } from "../../src/durable-objects/usage-accumulator/placement";
import { get, patch, post } from "../helpers";
import { sendAction, subscribe, subscriptionAccumulator, uniqueKey } from "../subscriptions/fixtures";

const usageOf = async (query: string) => (await get(`/v1/usage?${query}`)).body.usage;

describe("attribution of events to subscriptions", () => {
	it("follows an instance moved from one subscription to another", async () => {
		const moving = uniqueKey();
		const a = await subscribe([moving]);
		const b = await subscribe();
		expect((await sendAction({ agent_key: moving })).body.subscription_id).toBe(a.subscription.id);

		await patch(`/v1/subscriptions/${a.subscription.id}`, { agent_instance_ids: [uniqueKey()] });
		expect((await sendAction({ agent_key: moving })).body.subscription_id).toBeNull();

		await patch(`/v1/subscriptions/${b.subscription.id}`, { agent_instance_ids: [...b.keys, moving] });
		expect((await sendAction({ agent_key: moving })).body.subscription_id).toBe(b.subscription.id);
		expect((await sendAction({ agent_key: moving })).body.subscription_id).toBe(b.subscription.id);

		const line = (count: number) => [{ kind: "action", type: "llm_call", count, value: null }];
		expect(await usageOf(`subscription_id=${a.subscription.id}`)).toEqual(line(1));
		expect(await usageOf(`subscription_id=${b.subscription.id}`)).toEqual(line(2));
		// By instance, all four wherever they were counted.
		expect(await usageOf(`agent_key=${moving}`)).toEqual(line(4));
	});

	it("stops counting for a subscription once it is cancelled", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		await sendAction({ agent_key: agentKey });
		await post(`/v1/subscriptions/${subscription.id}/cancel`);
		const after = await sendAction({ agent_key: agentKey });
		expect(after.body.subscription_id).toBeNull();
		expect(await usageOf(`subscription_id=${subscription.id}`)).toEqual([
			{ kind: "action", type: "llm_call", count: 1, value: null },
		]);
	});

	it("re-routes an event sent with a stale route: the old holder refuses, the router refreshes from D1", async () => {
		const moving = uniqueKey();
		const a = await subscribe([moving]);
		await sendAction({ agent_key: moving });
		const staleRoute = {
			accumulator: `live:sub:${a.subscription.id}`,
			subscriptionId: a.subscription.id,
			accountId: a.account.id,
			startedAt: a.subscription.started_at,
			generation: (await subscriptionAccumulator(a.subscription.id).holdings())[0]?.generation ?? 0,
			shards: 1,
		};
		const b = await subscribe();
		await patch(`/v1/subscriptions/${a.subscription.id}`, { agent_instance_ids: [uniqueKey()] });
		await patch(`/v1/subscriptions/${b.subscription.id}`, { agent_instance_ids: [moving] });
		// Another isolate that last saw the instance in subscription A still has this route cached.
		rememberRoute("live", moving, staleRoute);
		let callsToA = 0;
		await runInDurableObject(subscriptionAccumulator(a.subscription.id), (instance: UsageAccumulator) => {
			// Spy on the accumulator's storage layer (RPC methods cannot be replaced on the instance).
			// Each counting pass remembers its caller first (counting.ts, countInStore).
			const store = (instance as unknown as { store: { remember: (...args: unknown[]) => unknown } }).store;
			const remember = store.remember.bind(store);
			store.remember = (...args) => {
				callsToA++;
				return remember(...args);
			};
		});

		const response = await sendAction({ agent_key: moving });
		expect(response.status).toBe(201);
		expect(response.body.subscription_id).toBe(b.subscription.id);
		expect(callsToA).toBe(1);
		expect(await usageOf(`subscription_id=${a.subscription.id}`)).toEqual([
			{ kind: "action", type: "llm_call", count: 1, value: null },
		]);
	});

	it("lets a new holder that missed its announcement accept events on the strength of a fresh route", async () => {
		const { subscription, keys } = await subscribe();
		const agentKey = keys[0] as string;
		// As if the announcement had been lost: the accumulator forgets what it was told.
		await runInDurableObject(subscriptionAccumulator(subscription.id), (_, state) => {
			state.storage.sql.exec("DELETE FROM holdings");
		});
		const response = await sendAction({ agent_key: agentKey });
		expect(response.body.subscription_id).toBe(subscription.id);
	});
});
