/**
 * Cost records built from events (CONTRACT §1, §11): ids sortable by creation time like every other id, the same
 * across retried flushes and as more cost joins the record.
 */
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import { newId } from "../../src/lib/ids";
import { get } from "../helpers";
import { sendAction, subscribe, subscriptionAccumulator } from "../subscriptions/fixtures";
import { failedFlush } from "../usage-accumulator/flush-fixtures";

async function costsOf(customerId: string) {
	const response = await get(`/v1/costs?customer_id=${customerId}&start_date=2000-01-01&end_date=2099-12-31`);
	expect(response.status, JSON.stringify(response.body)).toBe(200);
	return response.body.costs as { id: string; cost_type: string; amount: number }[];
}

describe("cost records from events", () => {
	it("get an id of their creation time, kept across a retried flush and as more cost arrives", async () => {
		const { subscription, account, keys } = await subscribe();
		const stub = subscriptionAccumulator(subscription.id);
		const before = newId("cost");
		await sendAction({ agent_key: keys[0], action_type: "llm_call", metadata: { cost: 0.25 } });

		// The first flush commits in D1, then the accumulator fails before marking it flushed: it flushes again.
		let failures = 1;
		await runInDurableObject(stub, (_, state) => {
			injectFaults(state, {
				flush: {
					afterBatch: () => {
						if (failures-- > 0) throw new Error("evicted after the D1 write");
					},
				},
			});
		});
		expect(String(await failedFlush(stub))).toContain("evicted");
		const [first] = await costsOf(account.id);
		await stub.flush();
		const after = newId("cost");
		const [retried] = await costsOf(account.id);
		expect(retried).toEqual(first);
		const id = (first as { id: string }).id;
		expect(id).toMatch(/^cost_[0-9a-z]{26}$/);
		// Made between `before` and `after`: sortable by creation time, not a digest.
		expect(before < id && id < after).toBe(true);

		await sendAction({ agent_key: keys[0], action_type: "llm_call", metadata: { cost: 0.5 } });
		await stub.flush();
		expect(await costsOf(account.id)).toEqual([{ ...first, amount: 0.75 }]);

		// A record created later sorts after it.
		await sendAction({ agent_key: keys[0], action_type: "search", metadata: { cost: 1 } });
		await stub.flush();
		const records = await costsOf(account.id);
		const search = records.find((r) => r.cost_type === "search") as { id: string };
		expect(search.id > id).toBe(true);
	});
});
