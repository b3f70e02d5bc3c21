/**
 * §37 on §14 for reservations: the hold lives in the subscription's head accumulator, the Idempotency-Key's record
 * in D1, so they cannot commit in one batch; the hold carries its key instead. A Worker that dies after holding
 * (or releasing), before its answer is stored, leaves the key's record in progress: the repeat, 62 s later, takes
 * it over as abandoned and must find the hold rather than hold (or release) a second time.
 */
import { describe, expect, it } from "vitest";
import { createKey, expectError, get, post } from "../helpers";
import { customer, sdkKey } from "../invoicing/fixtures";
import { crashBeforeAnswer } from "../support/crash-before-answer";

const plan = { base_fee: 10, charges: [] };

/** An instance whose block budget of 11 leaves 1.00 to hold over the base fee of 10. */
async function budgeted() {
	const { subscription, instances } = await customer(plan);
	const alert = await post("/v1/alerts", { subscription_id: subscription.id, threshold: 11, block: true });
	expect(alert.status, JSON.stringify(alert.body)).toBe(201);
	return { agentKey: instances[0] as string };
}

const withKey = (key: string, idempotencyKey: string) => ({
	key,
	headers: { "Idempotency-Key": idempotencyKey },
});

const budgetOf = async (agentKey: string) =>
	(await get(`/v1/entitlements?agent_key=${agentKey}`, { key: await sdkKey() })).body.budget;

describe("reservation writes whose Worker died before their answer was stored", () => {
	it("a hold: the repeat answers the same hold, and the budget holds it once", async () => {
		const { agentKey } = await budgeted();
		const key = await sdkKey();
		const body = { agent_key: agentKey, amount: 0.75, ttl_seconds: 120 };
		const { repeat } = await crashBeforeAnswer("/v1/reservations", () =>
			post("/v1/reservations", body, withKey(key, `hold-${agentKey}`)),
		);
		// Holding twice would be 1.50 of the 1.00 left: a 409 budget_exceeded for a hold that was made.
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		expect(repeat.body).toMatchObject({ agent_key: agentKey, amount: 0.75, status: "held" });
		expect(await budgetOf(agentKey)).toMatchObject({ spent: 10, held: 0.75, available: 0.25 });
		// The stored answer now replays as any other.
		const again = await post("/v1/reservations", body, withKey(key, `hold-${agentKey}`));
		expect(again.status).toBe(201);
		expect(again.body).toEqual(repeat.body);
	});

	it("a hold's key is the calling key's: another key with the same Idempotency-Key makes its own hold", async () => {
		const { agentKey } = await budgeted();
		const body = { agent_key: agentKey, amount: 0.25 };
		const { repeat } = await crashBeforeAnswer("/v1/reservations", async () =>
			post("/v1/reservations", body, withKey(await sdkKey(), `shared-${agentKey}`)),
		);
		const other = await post(
			"/v1/reservations",
			body,
			withKey(await createKey("read-write"), `shared-${agentKey}`),
		);
		expect(other.status, JSON.stringify(other.body)).toBe(201);
		expect(other.body.id).not.toBe(repeat.body.id);
		expect(await budgetOf(agentKey)).toMatchObject({ held: 0.5 });
	});

	it("a hold repeated with another body after the crash: 409 idempotency_key_reused, nothing more held", async () => {
		const { agentKey } = await budgeted();
		const key = await sdkKey();
		let amount = 0.5;
		const { repeat } = await crashBeforeAnswer("/v1/reservations", async () => {
			const answer = await post(
				"/v1/reservations",
				{ agent_key: agentKey, amount },
				withKey(key, `body-${agentKey}`),
			);
			amount = 0.1;
			return answer;
		});
		expectError(repeat, 409, "idempotency_key_reused");
		expect(await budgetOf(agentKey)).toMatchObject({ held: 0.5 });
	});

	it("a release: the repeat answers the released reservation, not 409", async () => {
		const { agentKey } = await budgeted();
		const key = await sdkKey();
		const hold = await post("/v1/reservations", { agent_key: agentKey, amount: 0.6 }, { key });
		expect(hold.status).toBe(201);
		const path = `/v1/reservations/${hold.body.id}/release`;
		const { repeat } = await crashBeforeAnswer(path, () =>
			post(path, undefined, withKey(key, "release-crash")),
		);
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		expect(repeat.body).toEqual({ ...hold.body, status: "released" });
		expect(await budgetOf(agentKey)).toMatchObject({ held: 0, available: 1 });
		// Without the key, or with another, a release of what is no longer held is still 409.
		expectError(await post(path, undefined, withKey(key, "release-other")), 409, "conflict");
		expectError(await post(path, undefined, { key }), 409, "conflict");
	});
});
