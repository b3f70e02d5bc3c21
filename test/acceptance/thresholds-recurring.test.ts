/**
 * Black-box checks of threshold invoices and recurring credits, written from the contract's text: a threshold
 * invoice within 10 seconds of the crossing event, each one a prefix of the period's bill, the regular invoice
 * billing the rest (base fee, minimum and discount on the whole period), and monthly grants with rollover made by
 * the monthly run.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { createAccount, expectError, get, patch, post } from "../helpers";
import {
	actions,
	createPlan,
	currentPeriod,
	generate,
	generateOne,
	type Invoice,
	instanceKey,
	outboxEvents,
	sendActions,
} from "../invoicing/fixtures";
import { clockAt, monthlyRun, nextMonthStart, perCall, tieredCalls } from "./plan-billing-fixtures";
import {
	awaitThresholdInvoices,
	CROSSING_MS,
	invoicesOfSubscription,
	lineAmount,
	pause,
	thresholdInvoices,
	thresholdSubscription,
} from "./threshold-fixtures";

afterEach(() => {
	vi.useRealTimers();
});

describe("invoicing_threshold on subscriptions", () => {
	it("is null by default, set on create and PATCH at once, and turned off with null", async () => {
		const none = await thresholdSubscription({ charges: [perCall(1)] }, null);
		expect(none.sub.invoicing_threshold).toBeNull();
		const { sub } = await thresholdSubscription({ charges: [perCall(1)] }, 10.5);
		expect(sub.invoicing_threshold).toBe(10.5);
		const changed = await patch(`/v1/subscriptions/${sub.id}`, { invoicing_threshold: 25 });
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body.invoicing_threshold).toBe(25);
		expect((await get(`/v1/subscriptions/${sub.id}`)).body.invoicing_threshold).toBe(25);
		const off = await patch(`/v1/subscriptions/${sub.id}`, { invoicing_threshold: null });
		expect(off.body.invoicing_threshold).toBeNull();
		expect((await get(`/v1/subscriptions/${sub.id}`)).body.invoicing_threshold).toBeNull();
	});

	it.each([[0], [-1], ["10"], [1e16], [0.1234567890123], [true]])(
		"refuses %j with 400, storing nothing",
		async (threshold) => {
			const plan = await createPlan({ charges: [perCall(1)] });
			const account = await createAccount();
			const created = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: plan.id,
				agent_instance_ids: [instanceKey()],
				invoicing_threshold: threshold,
			});
			expectError(created, 400, "validation_error");
			expect((await get(`/v1/subscriptions?account_id=${account.id}`)).body.total).toBe(0);
			const { sub } = await thresholdSubscription({ charges: [perCall(1)] }, 10);
			expectError(
				await patch(`/v1/subscriptions/${sub.id}`, { invoicing_threshold: threshold }),
				400,
				"validation_error",
			);
			expect((await get(`/v1/subscriptions/${sub.id}`)).body.invoicing_threshold).toBe(10);
		},
	);
});

describe("threshold invoices", () => {
	it("are issued when the unbilled usage reaches the threshold; the regular and supplementary bill the rest", async () => {
		const { account, key, plan, sub } = await thresholdSubscription(
			{ base_fee: 5, charges: [perCall(1)] },
			10,
		);
		await sendActions(actions(key, "call", 9));
		await sendActions(actions(key, "call", 1));
		const [invoice] = await awaitThresholdInvoices(sub.id, 1);
		expect(invoice).toMatchObject({
			kind: "threshold",
			status: "open",
			account_id: account.id,
			subscription_id: sub.id,
			rate_plan_id: plan.id,
			billing_period: currentPeriod(),
			currency: "USD",
			amount: 10,
			credits_applied: 0,
			amount_due: 10,
		});
		expect(invoice?.number).toMatch(/^INV-\d{6}$/);
		expect(invoice?.line_items.map((line) => [line.metric, line.quantity, line.amount])).toEqual([
			["calls", 10, 10],
		]);
		expect((await get(`/v1/invoices/${invoice?.id}`)).body).toMatchObject({ kind: "threshold", amount: 10 });
		const created = await outboxEvents("invoice.created", invoice?.id as string);
		expect(created).toHaveLength(1);
		expect(created[0]?.data).toMatchObject({ invoice_id: invoice?.id, amount: 10, status: "open" });

		await sendActions(actions(key, "call", 3));
		const regular = await generateOne(currentPeriod(), account.id);
		expect(regular.kind).toBe("regular");
		expect(lineAmount(regular, "base_fee")).toBe(5);
		expect(lineAmount(regular, "calls")).toBe(3);
		expect(regular.amount).toBe(8);
		expect(await generate(currentPeriod(), account.id)).toEqual({ status: 200, invoices: [] });

		await sendActions(actions(key, "call", 4));
		const supplementary = await generateOne(currentPeriod(), account.id);
		expect(supplementary).toMatchObject({ kind: "supplementary", amount: 4 });
		expect(await thresholdInvoices(sub.id)).toHaveLength(1);
	});

	it("never restart tiers: each is the period's bill so far less earlier ones (the docs' example)", async () => {
		const { account, key, sub } = await thresholdSubscription(
			{ base_fee: 10, charges: [tieredCalls(10, 1, 0.5)] },
			8,
		);
		await sendActions(actions(key, "call", 9));
		const [first] = await awaitThresholdInvoices(sub.id, 1);
		expect(first?.amount).toBe(9);
		await sendActions(actions(key, "call", 16));
		const [, second] = await awaitThresholdInvoices(sub.id, 2);
		// 25 calls: 10 × 1 + 15 × 0.5 = 17.50 for the period; 9 already billed.
		expect(second?.amount).toBe(8.5);
		expect(second?.line_items.map((line) => line.metric)).toEqual(["calls"]);
		const regular = await generateOne(currentPeriod(), account.id);
		expect(lineAmount(regular, "calls")).toBe(0);
		expect(lineAmount(regular, "base_fee")).toBe(10);
		expect(regular.amount).toBe(10);
	});

	it("make one invoice for a jump over several multiples in one batch", async () => {
		const { key, sub } = await thresholdSubscription({ charges: [perCall(1)] }, 5);
		await sendActions(actions(key, "call", 23));
		const [invoice] = await awaitThresholdInvoices(sub.id, 1);
		expect(invoice?.amount).toBe(23);
		await pause(2000);
		expect(await thresholdInvoices(sub.id)).toHaveLength(1);
	});

	it("start counting at once after a PATCH sets the threshold", async () => {
		const { key, sub } = await thresholdSubscription({ charges: [perCall(1)] }, null);
		await sendActions(actions(key, "call", 15));
		expect((await patch(`/v1/subscriptions/${sub.id}`, { invoicing_threshold: 10 })).status).toBe(200);
		await sendActions(actions(key, "call", 1));
		const [invoice] = await awaitThresholdInvoices(sub.id, 1);
		expect(invoice?.amount).toBe(16);
	});

	it("are paid by credits as any invoice", async () => {
		for (const [grant, due, status] of [
			[4, 6, "open"],
			[50, 0, "paid"],
		] as const) {
			const { account, key, sub } = await thresholdSubscription({ charges: [perCall(1)] }, 10);
			expect((await post(`/v1/accounts/${account.id}/credit-grants`, { amount: grant })).status).toBe(201);
			await sendActions(actions(key, "call", 10));
			const [invoice] = await awaitThresholdInvoices(sub.id, 1);
			expect(invoice).toMatchObject({ amount: 10, credits_applied: 10 - due, amount_due: due, status });
		}
	});

	it("are not made once the period has a regular invoice, a draft counting", async () => {
		// A base fee, so that the regular invoice is not paid at once for an amount of 0.
		const open = await thresholdSubscription({ base_fee: 1, charges: [perCall(1)] }, 10);
		const drafted = await thresholdSubscription({ base_fee: 1, charges: [perCall(1)] }, 10, {
			invoice_grace_days: 3,
		});
		expect((await generateOne(currentPeriod(), open.account.id)).status).toBe("open");
		const draft = await generateOne(currentPeriod(), drafted.account.id);
		expect(draft.status).toBe("draft");
		await sendActions([...actions(open.key, "call", 20), ...actions(drafted.key, "call", 20)]);
		await pause(CROSSING_MS);
		expect(await thresholdInvoices(open.sub.id)).toEqual([]);
		expect(await thresholdInvoices(drafted.sub.id)).toEqual([]);
		// Late usage updates the draft's lines when the period is generated again, and makes no invoice.
		expect(await generate(currentPeriod(), drafted.account.id)).toEqual({ status: 200, invoices: [] });
		expect((await get(`/v1/invoices/${draft.id}`)).body).toMatchObject({ status: "draft", amount: 21 });
		expect((await generateOne(currentPeriod(), open.account.id)).kind).toBe("supplementary");
	});

	it("no longer count as billed once void", async () => {
		const { account, key, sub } = await thresholdSubscription({ base_fee: 5, charges: [perCall(1)] }, 10);
		await sendActions(actions(key, "call", 10));
		const [invoice] = await awaitThresholdInvoices(sub.id, 1);
		expect((await post(`/v1/invoices/${invoice?.id}/void`, {})).status).toBe(200);
		await pause(2000);
		await generate(currentPeriod(), account.id);
		const live = (await invoicesOfSubscription(sub.id)).filter((i) => i.status !== "void");
		// Whatever was issued after the void, the period's invoices that are not void bill it exactly once.
		expect(live.reduce((sum, i) => sum + lineAmount(i, "calls"), 0)).toBe(10);
		expect(live.reduce((sum, i) => sum + i.amount, 0)).toBe(15);
	});
});

describe("recurring credit grants", () => {
	const url = (accountId: string) => `/v1/accounts/${accountId}/credit-grants`;
	const grantsOf = async (accountId: string) =>
		[...((await get(url(accountId))).body.credit_grants as any[])].sort((a, b) =>
			a.expires_at.localeCompare(b.expires_at),
		);

	it("show recurrence and rollover_max, expire at the next period's start, and refuse bad input", async () => {
		const account = await createAccount();
		const made = await post(url(account.id), { amount: 1000, recurrence: "monthly", rollover_max: 2000 });
		expect(made.status, JSON.stringify(made.body)).toBe(201);
		expect(made.body).toMatchObject({
			account_id: account.id,
			amount: 1000,
			remaining: 1000,
			currency: "USD",
			recurrence: "monthly",
			rollover_max: 2000,
			status: "active",
			expires_at: nextMonthStart(new Date().toISOString()),
		});
		const plain = await post(url(account.id), { amount: 5 });
		expect(plain.body).toMatchObject({ recurrence: null, rollover_max: null });
		const monthly = await post(url(account.id), { amount: 5, recurrence: "monthly" });
		expect(monthly.body).toMatchObject({ recurrence: "monthly", rollover_max: null });

		const before = (await get(url(account.id))).body.total;
		for (const body of [
			{ amount: 5, recurrence: "weekly" },
			{ amount: 5, rollover_max: 10 },
			{ amount: 5, recurrence: "monthly", rollover_max: -1 },
			{ amount: 5, recurrence: "monthly", rollover_max: "10" },
			{ amount: 5, recurrence: "monthly", expires_at: "2099-01-01T00:00:00Z" },
			{ amount: 0, recurrence: "monthly" },
		]) {
			expectError(await post(url(account.id), body), 400, "validation_error");
		}
		expect((await get(url(account.id))).body.total).toBe(before);
	});

	it("roll over up to rollover_max into the next period's grant (the contract's worked example)", async () => {
		clockAt("2026-01-05T10:00:00.000Z");
		const plan = await createPlan({ charges: [perCall(1)] });
		const customers = [];
		for (const rollover of [2000, 100, 0, null]) {
			const account = await createAccount();
			const key = instanceKey();
			const response = await post("/v1/subscriptions", {
				account_id: account.id,
				rate_plan_id: plan.id,
				agent_instance_ids: [key],
			});
			expect(response.status).toBe(201);
			const body = {
				amount: 1000,
				recurrence: "monthly",
				...(rollover === null ? {} : { rollover_max: rollover }),
			};
			const grant = await post(url(account.id), body);
			expect(grant.body.expires_at).toBe("2026-02-01T00:00:00.000Z");
			await sendActions(actions(key, "call", 600));
			customers.push({ account, key, rollover });
		}
		clockAt("2026-02-01T00:05:00.000Z");
		await monthlyRun("2026-02");
		await monthlyRun("2026-02");
		for (const { account, rollover } of customers) {
			const [january] = (await get(`/v1/invoices?account_id=${account.id}`)).body.invoices as Invoice[];
			expect(january).toMatchObject({
				billing_period: "2026-01",
				amount: 600,
				credits_applied: 600,
				status: "paid",
			});
			const grants = await grantsOf(account.id);
			expect(grants).toHaveLength(2);
			// What January's grant had left is settled by the run: the rollover lives on in February's grant.
			expect(grants[0]).toMatchObject({ amount: 1000, status: "expired" });
			expect(grants[1]).toMatchObject({
				amount: 1000 + Math.min(400, rollover ?? 0),
				remaining: 1000 + Math.min(400, rollover ?? 0),
				recurrence: "monthly",
				rollover_max: rollover,
				status: "active",
				expires_at: "2026-03-01T00:00:00.000Z",
			});
		}
	});

	it("pay their own period's invoices issued after they expired", async () => {
		clockAt("2026-01-05T10:00:00.000Z");
		const plan = await createPlan({ charges: [perCall(1)] });
		const account = await createAccount();
		const key = instanceKey();
		const sub = { account_id: account.id, rate_plan_id: plan.id, agent_instance_ids: [key] };
		expect((await post("/v1/subscriptions", sub)).status).toBe(201);
		const body = { amount: 1000, recurrence: "monthly", rollover_max: 2000 };
		expect((await post(url(account.id), body)).status).toBe(201);
		await sendActions(actions(key, "call", 600));
		clockAt("2026-01-20T00:00:00.000Z");
		expect((await generateOne("2026-01", account.id)).credits_applied).toBe(600);
		await sendActions(actions(key, "call", 100));

		clockAt("2026-02-01T00:05:00.000Z");
		await monthlyRun("2026-02");
		// The run's supplementary invoice of January, issued after January's grant expired, is paid by it.
		const [supplementary] = (await get(`/v1/invoices?account_id=${account.id}`)).body.invoices as Invoice[];
		expect(supplementary).toMatchObject({
			billing_period: "2026-01",
			kind: "supplementary",
			amount: 100,
			credits_applied: 100,
			status: "paid",
		});
		const grants = await grantsOf(account.id);
		expect(grants.map((g) => [g.amount, g.status])).toEqual([
			[1000, "expired"],
			[1300, "active"],
		]);

		// Late January usage invoiced now: January's grant was settled by the run; February's, active, pays any
		// invoice created while it is (§17).
		clockAt("2026-02-10T00:00:00.000Z");
		await sendActions([
			...actions(key, "call", 30),
			...Array.from({ length: 50 }, () => ({
				agent_key: key,
				action_type: "call",
				timestamp: "2026-01-25T00:00:00.000Z",
			})),
		]);
		const late = await generateOne("2026-01", account.id);
		expect(late).toMatchObject({ kind: "supplementary", amount: 50, credits_applied: 50, amount_due: 0 });
		const february = await generateOne("2026-02", account.id);
		expect(february).toMatchObject({ amount: 30, credits_applied: 30 });
		expect((await grantsOf(account.id)).map((g) => g.remaining)).toEqual([0, 1220]);
	});

	it("may be voided when depleted, which stops the recurrence", async () => {
		clockAt("2026-01-05T10:00:00.000Z");
		const plan = await createPlan({ charges: [perCall(1)] });
		const account = await createAccount();
		const key = instanceKey();
		expect(
			(
				await post("/v1/subscriptions", {
					account_id: account.id,
					rate_plan_id: plan.id,
					agent_instance_ids: [key],
				})
			).status,
		).toBe(201);
		const recurring = (await post(url(account.id), { amount: 5, recurrence: "monthly" })).body;
		await sendActions(actions(key, "call", 5));
		clockAt("2026-01-20T00:00:00.000Z");
		expect((await generateOne("2026-01", account.id)).credits_applied).toBe(5);
		const used = (await get(url(account.id))).body.credit_grants.find((g: any) => g.id === recurring.id);
		expect(used).toMatchObject({ remaining: 0, status: "depleted" });
		const voided = await post(`${url(account.id)}/${recurring.id}/void`, {});
		expect(voided.status, JSON.stringify(voided.body)).toBe(200);
		expect(voided.body).toMatchObject({ id: recurring.id, status: "void", remaining: 0 });
		expectError(await post(`${url(account.id)}/${recurring.id}/void`, {}), 409, "conflict");

		clockAt("2026-02-01T00:05:00.000Z");
		await monthlyRun("2026-02");
		expect((await grantsOf(account.id)).map((g) => g.id)).toEqual([recurring.id]);
	});
});
