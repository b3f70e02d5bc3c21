/**
 * Black-box checks of what counts in the billing currency (CONTRACT §35 with §18, §25, §33, §34): alert thresholds
 * on the total, reservations, invoicing thresholds, and plan changes that keep billing_currency.
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createAccount, expectError, get, patch, post } from "../helpers";
import { createPlan, generate, invoicesOf, sdkKey } from "../invoicing/fixtures";
import { calls, exchangeRate, PERIOD, perCall, subscription } from "./billing-fixtures";
import { pdfLines } from "./pdf-text";

async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 10_000): Promise<T> {
	const deadline = Date.now() + ms;
	let value = await read();
	while (!done(value) && Date.now() < deadline) {
		await new Promise((resolve) => setTimeout(resolve, 250));
		value = await read();
	}
	return value;
}

/** A subscription to a plan of 1.00 USD per call billed in SGD at 2 SGD per USD. */
async function inSgd(fields: Record<string, unknown> = {}) {
	await exchangeRate("USD", "SGD", 2, "2026-01-01T00:00:00Z");
	const plan = await createPlan({ currency: "USD", charges: [perCall(1)] });
	const acct = await createAccount();
	const sub = await subscription(acct.id, plan.id, { billing_currency: "SGD", ...fields });
	return { account: acct, plan, sub };
}

describe("amounts that count in the billing currency", () => {
	// Skipped until the accumulator counts alert totals, reservations and invoicing thresholds in the billing
	// currency (the fxgaps branch): today they compare plan-currency amounts (a 5.00 USD total against a 10 SGD
	// threshold; a reservation answered in USD with spent 3 instead of 6 SGD). Unskip after that merge.
	it("an alert on the total triggers at its threshold in the billing currency", async () => {
		const { sub } = await inSgd();
		const alert = await post("/v1/alerts", { subscription_id: sub.id, threshold: 10 });
		expect(alert.status, JSON.stringify(alert.body)).toBe(201);
		await calls(sub.instance, 4); // 8 SGD
		await new Promise((resolve) => setTimeout(resolve, 1500));
		expect((await get(`/v1/alerts/${alert.body.id}`)).body.status).toBe("armed");
		await calls(sub.instance, 1); // 10 SGD (5 USD)
		const read = await eventually(
			() => get(`/v1/alerts/${alert.body.id}`),
			(r) => r.body.status === "triggered",
		);
		expect(read.body.status).toBe("triggered");
	});

	it("a reservation fits a budget counted in the billing currency", async () => {
		const { sub } = await inSgd();
		const alert = await post("/v1/alerts", { subscription_id: sub.id, threshold: 10, block: true });
		expect(alert.status).toBe(201);
		await calls(sub.instance, 3); // 6 SGD
		const key = await sdkKey();
		// wait until the three calls are counted (whatever the currency the budget reads them in)
		await eventually(
			() => get(`/v1/usage?subscription_id=${sub.id}`),
			(r) => r.body.usage?.[0]?.count === 3,
		);
		await new Promise((resolve) => setTimeout(resolve, 1000));
		const refused = await post("/v1/reservations", { agent_key: sub.instance, amount: 5 }, { key });
		const error = expectError(refused, 409, "budget_exceeded");
		expect(error.details).toEqual([
			{ alert_id: alert.body.id, threshold: 10, spent: 6, held: 0, requested: 5 },
		]);
		const held = await post("/v1/reservations", { agent_key: sub.instance, amount: 4 }, { key });
		expect(held.status, JSON.stringify(held.body)).toBe(201);
		expect(held.body).toMatchObject({ currency: "SGD", amount: 4, status: "held" });
	});

	it("an invoicing threshold is reached in the billing currency and its invoice is converted", async () => {
		const { account: acct, sub } = await inSgd({ invoicing_threshold: 10 });
		await calls(sub.instance, 4); // 8 SGD
		await new Promise((resolve) => setTimeout(resolve, 1500));
		expect(await invoicesOf(acct.id)).toEqual([]);
		await calls(sub.instance, 1); // 10 SGD
		const made = await eventually(
			() => invoicesOf(acct.id),
			(list) => list.length > 0,
		);
		expect(made.map((i) => [i.kind, i.currency, i.amount])).toEqual([["threshold", "SGD", 10]]);
		expect((made[0] as any).line_items).toMatchObject([
			{ original_amount: 5, original_currency: "USD", amount: 10 },
		]);
	});

	it("real-time usage answers its currency also without conversion", async () => {
		const plan = await createPlan({ currency: "USD", charges: [perCall(1)] });
		const acct = await createAccount();
		const sub = await subscription(acct.id, plan.id);
		await calls(sub.instance, 2);
		expect((await get(`/v1/usage?subscription_id=${sub.id}`)).body).toMatchObject({
			currency: "USD",
			total: 2,
		});
	});
});

describe("plan changes and the billing currency", () => {
	it("compare with the current plan's currency and never change billing_currency", async () => {
		const { sub } = await inSgd();
		const inEuros = await createPlan({ currency: "EUR", charges: [perCall(1)] });
		const inSgdPlan = await createPlan({ currency: "SGD", charges: [perCall(1)] });
		for (const id of [inEuros.id, inSgdPlan.id]) {
			expectError(
				await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: id }),
				409,
				"conflict",
			);
			expectError(await patch(`/v1/subscriptions/${sub.id}`, { rate_plan_id: id }), 409, "conflict");
		}
		const dollars = await createPlan({ currency: "USD", charges: [perCall(2)] });
		const changed = await post(`/v1/subscriptions/${sub.id}/change-plan`, { rate_plan_id: dollars.id });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body.billing_currency).toBe("SGD");
		expect(changed.body.pending_plan_change).toMatchObject({ rate_plan_id: dollars.id });
	});
});

describe("the documents of a converted invoice", () => {
	it("show the rate used and the original amounts in the PDF", async () => {
		await exchangeRate("USD", "INR", 83.25);
		const plan = await createPlan({ currency: "USD", base_fee: 12, charges: [] });
		const acct = await createAccount();
		await subscription(acct.id, plan.id, { billing_currency: "INR" });
		const [inv] = (await generate(PERIOD, acct.id)).invoices as any[];
		expect(inv).toMatchObject({ currency: "INR", amount: 999 });
		const response = await exports.default.fetch(
			new Request(`https://billing.test/v1/invoices/${inv.id}/pdf`, {
				headers: { Authorization: `Bearer ${ADMIN_KEY}` },
			}),
		);
		expect(response.status).toBe(200);
		const text = (await pdfLines(new Uint8Array(await response.arrayBuffer()))).join("\n");
		expect(text).toContain("83.25");
		expect(text).toMatch(/USD\s*12\.00/);
		expect(text).toMatch(/INR\s*999\.00/);
	});
});
