import { describe, expect, it } from "vitest";
import { createAccount, createKey, expectError, get, post } from "../helpers";
import { createPlan, subscribe, uniqueKey } from "./fixtures";

describe("GET /v1/subscriptions", () => {
	it("lists newest first, filtered by account and status, with pagination", async () => {
		const account = await createAccount();
		const plan = await createPlan();
		const ids: string[] = [];
		for (let i = 0; i < 3; i++) {
			const r = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: plan.id,
				agent_instance_ids: [uniqueKey()],
			});
			ids.push(r.body.id);
		}
		expect((await post(`/v1/subscriptions/${ids[0]}/cancel`)).status).toBe(200);

		const all = await get(`/v1/subscriptions?account_id=${account.id}`);
		expect(all.status).toBe(200);
		expect(all.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([...ids].reverse());
		expect(all.body).toMatchObject({ total: 3, limit: 20, offset: 0 });

		const active = await get(`/v1/subscriptions?account_id=${account.id}&status=active`);
		expect(active.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([ids[2], ids[1]]);
		const cancelled = await get(`/v1/subscriptions?account_id=${account.id}&status=cancelled`);
		expect(cancelled.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([ids[0]]);
		expect(cancelled.body.total).toBe(1);

		const page = await get(`/v1/subscriptions?account_id=${account.id}&limit=1&offset=1`);
		expect(page.body.subscriptions.map((s: { id: string }) => s.id)).toEqual([ids[1]]);
		expect(page.body).toMatchObject({ total: 3, limit: 1, offset: 1 });
	});

	it.each([
		["an unknown status", "status=paused", "status"],
		["a limit over 100", "limit=101", "limit"],
		["an unknown filter", "plan=x", "plan"],
	])("answers 400 for %s", async (_, query, path) => {
		const error = expectError(await get(`/v1/subscriptions?${query}`), 400, "validation_error");
		expect(error.details?.map((d) => d.path).join()).toContain(path);
	});

	it("is readable with a read-only key but not an SDK key", async () => {
		const { subscription } = await subscribe();
		const readOnly = await get(`/v1/subscriptions/${subscription.id}`, { key: await createKey("read-only") });
		expect(readOnly.body).toEqual(subscription);
		expectError(await get("/v1/subscriptions", { key: await createKey("sdk") }), 403, "forbidden");
	});
});

describe("GET /v1/subscriptions/{id}", () => {
	it("answers 404 for an unknown id and for an id of the other environment", async () => {
		expectError(await get("/v1/subscriptions/sub_missing"), 404, "not_found");
		const { subscription } = await subscribe();
		const testKey = await createKey("read-only", "test");
		expectError(await get(`/v1/subscriptions/${subscription.id}`, { key: testKey }), 404, "not_found");
	});
});
