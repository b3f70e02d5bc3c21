import { describe, expect, it } from "vitest";
import { get, post } from "../helpers";
import { sendAction, sendOutcome, subscribe, uniqueKey } from "../subscriptions/fixtures";

async function countOf(agentKey: string, kind: "action" | "outcome" = "action") {
	const usage = await get(`/v1/usage?agent_key=${agentKey}`);
	return usage.body.usage
		.filter((line: { kind: string }) => line.kind === kind)
		.reduce((sum: number, line: { count: number }) => sum + line.count, 0);
}

describe("deduplication of events", () => {
	it("answers a repeated idempotency_key with 200 and the original event, counted once", async () => {
		const { keys } = await subscribe();
		const agentKey = keys[0] as string;
		const first = await sendAction({
			agent_key: agentKey,
			idempotency_key: "req-1",
			metadata: { tokens: 10 },
		});
		expect(first.status).toBe(201);
		expect(first.headers.get("Idempotent-Replayed")).toBeNull();
		// A different body with the same key still answers the original event.
		const repeat = await sendAction({
			agent_key: agentKey,
			idempotency_key: "req-1",
			metadata: { tokens: 99 },
		});
		expect(repeat.status).toBe(200);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		expect(repeat.body).toEqual(first.body);
		expect(await countOf(agentKey)).toBe(1);
	});

	it("takes the Idempotency-Key header when the body has no key", async () => {
		const agentKey = uniqueKey();
		const headers = { "Idempotency-Key": `hdr-${agentKey}` };
		const first = await sendOutcome({ agent_key: agentKey, value: 5 }, { headers });
		const repeat = await sendOutcome({ agent_key: agentKey, value: 5 }, { headers });
		expect([first.status, repeat.status]).toEqual([201, 200]);
		expect(repeat.body.id).toBe(first.body.id);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		expect(await countOf(agentKey, "outcome")).toBe(1);
	});

	it("counts 50 concurrent copies once, all answering the first event's id", async () => {
		const { keys } = await subscribe();
		const agentKey = keys[0] as string;
		const responses = await Promise.all(
			Array.from({ length: 50 }, () => sendAction({ agent_key: agentKey, idempotency_key: "burst" })),
		);
		const created = responses.filter((r) => r.status === 201);
		expect(created).toHaveLength(1);
		expect(responses.filter((r) => r.status === 200)).toHaveLength(49);
		expect(new Set(responses.map((r) => r.body.id))).toEqual(new Set([created[0]?.body.id]));
		expect(await countOf(agentKey)).toBe(1);
	});

	it("keeps the keys of actions and outcomes apart", async () => {
		const agentKey = uniqueKey();
		const action = await sendAction({ agent_key: agentKey, idempotency_key: "same" });
		const outcome = await sendOutcome({ agent_key: agentKey, idempotency_key: "same" });
		expect([action.status, outcome.status]).toEqual([201, 201]);
	});

	it("answers a retried batch with 200, every event a duplicate of the first attempt", async () => {
		const agentKey = uniqueKey();
		const body = {
			events: [
				{ agent_key: agentKey, action_type: "a" },
				{ agent_key: agentKey, action_type: "b", idempotency_key: `own-${agentKey}` },
			],
		};
		const headers = { "Idempotency-Key": `batch-${agentKey}` };
		const first = await post("/v1/actions/batch", body, { headers });
		const retry = await post("/v1/actions/batch", body, { headers });
		expect([first.status, retry.status]).toEqual([201, 200]);
		expect(retry.headers.get("Idempotent-Replayed")).toBe("true");
		expect(retry.body).toMatchObject({ processed: 0, duplicates: 2 });
		expect(retry.body.results.map((r: { id: string }) => r.id)).toEqual(
			first.body.results.map((r: { id: string }) => r.id),
		);
		expect(retry.body.results.map((r: { status: string }) => r.status)).toEqual(["duplicate", "duplicate"]);
		expect(await countOf(agentKey)).toBe(2);
	});
});
