import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, post } from "../helpers";
import { customer } from "../invoicing/fixtures";
import { crashBeforeAnswer } from "../support/crash-before-answer";

// §37 on §14: grants, their voids and discounts commit with their Idempotency-Key's answer (db/write-once.ts).

const headers = (key: string) => ({ headers: { "Idempotency-Key": key } });
const rows = async (sql: string, id: string) => (await env.DB.prepare(sql).bind(id).all()).results;

describe("credit writes whose Worker died before their answer was stored", () => {
	it("a grant: the repeat answers the same grant, and the account has one", async () => {
		const account = await createAccount();
		const path = `/v1/accounts/${account.id}/credit-grants`;
		const { repeat } = await crashBeforeAnswer(path, () =>
			post(path, { amount: 50 }, headers("grant-crash")),
		);
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.headers.get("Idempotent-Replayed")).toBe("true");
		expect(repeat.body).toMatchObject({ amount: 50, remaining: 50, status: "active" });
		const grants = await rows("SELECT id FROM credit_grants WHERE account_id = ?1", account.id);
		expect(grants).toEqual([{ id: repeat.body.id }]);
	});

	it("a grant's void: the repeat answers the void grant, not 409", async () => {
		const account = await createAccount();
		const grant = (await post(`/v1/accounts/${account.id}/credit-grants`, { amount: 20 })).body;
		const path = `/v1/accounts/${account.id}/credit-grants/${grant.id}/void`;
		const { repeat } = await crashBeforeAnswer(path, () =>
			post(path, undefined, headers("void-grant-crash")),
		);
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(200);
		expect(repeat.body).toMatchObject({ id: grant.id, status: "void", remaining: 0 });
	});

	it("a discount: the repeat answers the same discount, redeemed once", async () => {
		const { subscription } = await customer({ base_fee: 10, charges: [] });
		const coupon = (
			await post("/v1/coupons", { code: `CRASH${Date.now()}`, percent_off: 10, duration: "forever" })
		).body;
		const path = `/v1/subscriptions/${subscription.id}/discounts`;
		const { repeat } = await crashBeforeAnswer(path, () =>
			post(path, { coupon_id: coupon.id }, headers("discount-crash")),
		);
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.body).toMatchObject({ coupon_id: coupon.id, subscription_id: subscription.id });
		expect(
			await rows("SELECT id FROM subscription_discounts WHERE subscription_id = ?1", subscription.id),
		).toEqual([{ id: repeat.body.id }]);
		expect(await rows("SELECT times_redeemed FROM coupons WHERE id = ?1", coupon.id)).toEqual([
			{ times_redeemed: 1 },
		]);
	});
});
