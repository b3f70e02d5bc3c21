/**
 * Black-box checks of what the regular invoice bills after threshold invoices, written from the contract's text:
 * the minimum and the discount on the whole period (what the discount cannot take becomes credit, once), later
 * supplementary invoices, overrides and outcomes in the threshold's amount, and bursts that bill nothing twice.
 */
import { describe, expect, it } from "vitest";
import { createAccount, get, post } from "../helpers";
import {
	actions,
	currentPeriod,
	generate,
	generateOne,
	instanceKey,
	sdkKey,
	sendActions,
} from "../invoicing/fixtures";
import { perCall } from "./plan-billing-fixtures";
import {
	awaitThresholdInvoices,
	CROSSING_MS,
	invoicesOfSubscription,
	lineAmount,
	pause,
	thresholdInvoices,
	thresholdSubscription,
} from "./threshold-fixtures";

const code = () => `T${crypto.randomUUID().slice(0, 8).toUpperCase()}`;

describe("threshold invoices and the period's regular invoice", () => {
	it("leave the minimum to the regular invoice, computed on the whole period", async () => {
		const { account, key, sub } = await thresholdSubscription(
			{ base_fee: 5, minimum_amount: 30, charges: [perCall(1)] },
			10,
		);
		await sendActions(actions(key, "call", 12));
		const [invoice] = await awaitThresholdInvoices(sub.id, 1);
		expect(invoice?.line_items.map((line) => line.metric)).toEqual(["calls"]);
		// The upcoming invoice is the regular one the period would make now; real-time usage rates the whole period.
		const upcoming = await get(`/v1/invoices/upcoming?subscription_id=${sub.id}`);
		expect(upcoming.body).toMatchObject({ kind: "regular", amount: 18 });
		expect((await get(`/v1/usage?subscription_id=${sub.id}`)).body.total).toBe(30);
		const regular = await generateOne(currentPeriod(), account.id);
		// The whole period: 5 + 12 = 17, under 30: a top-up of 13 on top of the base fee.
		expect(lineAmount(regular, "minimum_commitment")).toBe(13);
		expect(regular.amount).toBe(18);
	});

	it("leave the discount to the regular invoice, on the whole period; what it cannot take becomes credit", async () => {
		const code = () => `T${crypto.randomUUID().slice(0, 8).toUpperCase()}`;
		for (const [coupon, discountLine, amount, credit] of [
			[{ percent_off: 10, duration: "forever" }, -3.5, 11.5, null],
			[{ amount_off: 50, currency: "USD", duration: "once" }, -15, 0, 20],
		] as const) {
			const { account, key, sub } = await thresholdSubscription({ base_fee: 10, charges: [perCall(1)] }, 20);
			const made = await post("/v1/coupons", { code: code(), ...coupon });
			expect(made.status, JSON.stringify(made.body)).toBe(201);
			const discount = await post(`/v1/subscriptions/${sub.id}/discounts`, { coupon_id: made.body.id });
			expect(discount.status, JSON.stringify(discount.body)).toBe(201);
			await sendActions(actions(key, "call", 20));
			const [invoice] = await awaitThresholdInvoices(sub.id, 1);
			expect(invoice?.line_items.map((line) => line.metric)).toEqual(["calls"]);
			expect(invoice?.amount).toBe(20);
			await sendActions(actions(key, "call", 5));
			const regular = await generateOne(currentPeriod(), account.id);
			// The whole period is 10 + 25 = 35; the regular invoice's other lines are 10 + 5 = 15.
			expect(lineAmount(regular, "discount")).toBe(discountLine);
			expect(regular.amount).toBe(amount);
			const grants = (await get(`/v1/accounts/${account.id}/credit-grants`)).body.credit_grants as any[];
			const granted = grants.filter(
				(g) => g.description === `${made.body.code} discount, ${currentPeriod()}`,
			);
			expect(granted.map((g) => g.amount)).toEqual(credit === null ? [] : [credit]);
		}
	});

	it("keep the period at its minimum once, with later usage on a supplementary invoice", async () => {
		const { account, key, sub } = await thresholdSubscription(
			{ base_fee: 5, minimum_amount: 30, charges: [perCall(1)] },
			10,
		);
		await sendActions(actions(key, "call", 12));
		await awaitThresholdInvoices(sub.id, 1);
		expect((await generateOne(currentPeriod(), account.id)).amount).toBe(18);
		// The whole period is now 5 + 32 = 37, over the minimum: 12 + 18 were billed, so 7 more.
		await sendActions(actions(key, "call", 20));
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(supplementary).toMatchObject({ kind: "supplementary", amount: 7 });
		const live = (await invoicesOfSubscription(sub.id)).filter((i) => i.status !== "void");
		expect(live.reduce((sum, i) => sum + i.amount, 0)).toBe(37);
	});

	it("grant what the discount leaves once, when a draft regular invoice is finalized", async () => {
		const { account, key, sub } = await thresholdSubscription({ base_fee: 10, charges: [perCall(1)] }, 20, {
			invoice_grace_days: 3,
		});
		const made = await post("/v1/coupons", {
			code: code(),
			amount_off: 50,
			currency: "USD",
			duration: "once",
		});
		expect((await post(`/v1/subscriptions/${sub.id}/discounts`, { coupon_id: made.body.id })).status).toBe(
			201,
		);
		await sendActions(actions(key, "call", 20));
		const [threshold] = await awaitThresholdInvoices(sub.id, 1);
		// Never a draft, even for an account with grace days.
		expect(threshold).toMatchObject({ status: "open", amount: 20 });
		expect(threshold?.number).toMatch(/^INV-\d{6}$/);
		await sendActions(actions(key, "call", 5));
		const draft = await generateOne(currentPeriod(), account.id);
		expect(draft.status).toBe("draft");
		const finalized = await post(`/v1/invoices/${draft.id}/finalize`, {});
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body).toMatchObject({ amount: 0 });
		expect(lineAmount(finalized.body, "discount")).toBe(-15);
		await generate(currentPeriod(), account.id);
		const grants = (await get(`/v1/accounts/${account.id}/credit-grants`)).body.credit_grants as any[];
		const granted = grants.filter((g) => g.description === `${made.body.code} discount, ${currentPeriod()}`);
		expect(granted.map((g) => g.amount)).toEqual([20]);
	});
});

describe("the threshold's amount", () => {
	it("counts charges after the subscription's price overrides, outcomes included", async () => {
		const wins = {
			metric: "wins",
			source: { kind: "outcome", type: "win", aggregate: "sum" },
			model: "percentage",
			percent: 10,
		};
		const { plan } = await thresholdSubscription({ charges: [perCall(1), wins] }, null);
		const account = await createAccount();
		const key = instanceKey();
		const created = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [key],
			invoicing_threshold: 10,
			price_overrides: [{ metric: "calls", model: "per_unit", unit_price: 2, included_quantity: 1 }],
		});
		expect(created.status, JSON.stringify(created.body)).toBe(201);
		await sendActions(actions(key, "call", 5));
		await pause(1500);
		expect(await thresholdInvoices(created.body.id)).toEqual([]);
		const outcome = await post(
			"/v1/outcomes",
			{ agent_key: key, outcome_type: "win", value: 25 },
			{ key: await sdkKey() },
		);
		expect(outcome.status).toBe(201);
		const [invoice] = await awaitThresholdInvoices(created.body.id, 1);
		// (5 − 1) × 2 = 8 below 10; the outcome's 25 × 10% = 2.50 crosses.
		expect(invoice?.line_items.map((line) => [line.metric, line.quantity, line.amount])).toEqual([
			["calls", 5, 8],
			["wins", 25, 2.5],
		]);
		expect(invoice?.amount).toBe(10.5);
	});

	it("bills nothing twice when a burst crosses it from many connections", async () => {
		const { account, key, sub } = await thresholdSubscription({ charges: [perCall(1)] }, 5);
		const sdk = await sdkKey();
		const sent = await Promise.all(
			Array.from({ length: 20 }, () =>
				post("/v1/actions", { agent_key: key, action_type: "call" }, { key: sdk }),
			),
		);
		expect(sent.map((r) => r.status)).toEqual(Array(20).fill(201));
		await pause(CROSSING_MS);
		const thresholds = await thresholdInvoices(sub.id);
		expect(thresholds.length).toBeGreaterThanOrEqual(1);
		for (const invoice of thresholds) expect(invoice.amount).toBeGreaterThanOrEqual(5);
		await generate(currentPeriod(), account.id);
		const all = await invoicesOfSubscription(sub.id);
		expect(all.reduce((sum, i) => sum + lineAmount(i, "calls"), 0)).toBe(20);
	});
});
