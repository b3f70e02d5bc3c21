import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type BilledLine, computeInvoice, type SubscriptionPeriodState } from "../../src/invoicing/computed";
import { Decimal } from "../../src/lib/decimal";
import { roundMoney } from "../../src/lib/money";
import type { UsageAggregate } from "../../src/pricing/quantities";
import { MINIMUM_METRIC, rateUsage } from "../../src/pricing/rate";
import type { RatePlanRow } from "../../src/pricing/rate-plans";

// The minimum commitment (§16): a period costs at least the plan's minimum; the top-up is the last line.

const tokensCharge = {
	metric: "tokens",
	source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
	model: "per_unit",
	unit_price: 0.001,
} as const;

function plan(baseFee: string, minimum: string): RatePlanRow {
	return {
		id: "plan_min",
		environment: "live",
		name: "Minimum",
		description: null,
		currency: "USD",
		baseFee,
		minimumAmount: minimum,
		prorate: false,
		charges: [tokensCharge],
		status: "active",
		createdAt: "2026-01-01T00:00:00.000Z",
	};
}

function tokens(sum: string): UsageAggregate[] {
	return [
		{ kind: "action", type: "llm_call", field: "", count: 1, sum: "0" },
		{ kind: "action", type: "llm_call", field: "tokens", count: 1, sum },
	];
}

function state(row: RatePlanRow, sum: string, billed: BilledLine[][]): SubscriptionPeriodState {
	return {
		subscriptionId: "sub_1",
		accountId: "acct_1",
		plan: row,
		usage: tokens(sum).map((u) => ({ ...u, agentId: "agt_1" })),
		sequences: billed.map((_, i) => i + 1),
		billedLines: billed.flat(),
		invoiced: billed.length > 0,
	};
}

const asBilled = (draft: NonNullable<ReturnType<typeof computeInvoice>>): BilledLine[] =>
	draft.lines.map((l) => ({
		metric: l.metric,
		quantity: l.quantity.toString(),
		amount: l.amount.toString(),
		agentShares: l.agentShares,
	}));

const lines = (draft: ReturnType<typeof computeInvoice>) =>
	draft?.lines.map((l) => [l.metric, l.description, l.quantity.toString(), l.amount.toString()]);

describe("rateUsage with a minimum", () => {
	const pricing = { currency: "USD", base_fee: "100", minimum_amount: "500", charges: [tokensCharge] };

	it("adds the top-up as the last charge when the subtotal is below the minimum", () => {
		// base 100 + 150,000 tokens × 0.001 = 150 → 250; minimum 500 → top-up 250
		const rated = rateUsage(pricing, { tokens: Decimal.from(150000) });
		expect(rated.charges.map((c) => [c.metric, c.model, c.quantity.toString(), c.amount.toString()])).toEqual(
			[
				["base_fee", "flat", "1", "100"],
				["tokens", "per_unit", "150000", "150"],
				["minimum_commitment", "flat", "1", "250"],
			],
		);
		expect(rated.total.toString()).toBe("500");
	});

	it("adds nothing when the subtotal reaches the minimum exactly or goes over", () => {
		expect(rateUsage(pricing, { tokens: Decimal.from(400000) }).charges.at(-1)?.metric).toBe("tokens");
		expect(rateUsage(pricing, { tokens: Decimal.from(400000) }).total.toString()).toBe("500");
		expect(rateUsage(pricing, { tokens: Decimal.from(400010) }).total.toString()).toBe("500.01");
	});

	it("rounds the minimum to the currency's minor unit like any line", () => {
		const yen = { currency: "JPY", base_fee: 0, minimum_amount: "999.5", charges: [tokensCharge] };
		expect(rateUsage(yen, {}).total.toString()).toBe("1000");
	});

	it("has no top-up without a minimum", () => {
		const none = { currency: "USD", base_fee: 0, charges: [tokensCharge] };
		expect(rateUsage(none, {}).charges.map((c) => c.metric)).toEqual(["tokens"]);
	});
});

describe("invoices of a plan with a minimum", () => {
	it("a minimum with a supplementary invoice: the top-up shrinks as late usage arrives, never billed twice", () => {
		const row = plan("100", "500");
		// Regular: base 100 + 150,000 tokens → 150; subtotal 250 → top-up 250; amount 500
		const regular = computeInvoice(state(row, "150000", []));
		expect(lines(regular)).toEqual([
			["base_fee", "Base fee", "1", "100"],
			["tokens", "tokens — 150,000 units", "150000", "150"],
			[MINIMUM_METRIC, "Minimum commitment top-up", "1", "250"],
		]);
		expect(regular?.amount.toString()).toBe("500");
		const first = asBilled(regular as NonNullable<typeof regular>);

		// 100,000 late tokens: usage 250 + base 100 = 350 → top-up now 150. +100 usage, −100 top-up: total stays 500.
		const second = computeInvoice(state(row, "250000", [first]));
		expect(second?.kind).toBe("supplementary");
		expect(lines(second)).toEqual([
			["tokens", "tokens — late usage: 100,000 units (250,000 in total)", "100000", "100"],
			[MINIMUM_METRIC, "Minimum commitment top-up — adjustment", "0", "-100"],
		]);
		expect(second?.amount.toString()).toBe("0");
		const billedSecond = asBilled(second as NonNullable<typeof second>);

		// 450,000 more: usage 700 + base 100 = 800 ≥ 500 → the top-up of 150 still billed is credited:
		// +450 usage − 150 top-up = +300; the period's total is 800, its usage, and no minimum is left.
		const third = computeInvoice(state(row, "700000", [first, billedSecond]));
		expect(lines(third)).toEqual([
			["tokens", "tokens — late usage: 450,000 units (700,000 in total)", "450000", "450"],
			[MINIMUM_METRIC, "Minimum commitment top-up — adjustment", "-1", "-150"],
		]);
		expect(third?.amount.toString()).toBe("300");
		const billedThird = asBilled(third as NonNullable<typeof third>);
		// Nothing new → nothing to bill.
		expect(computeInvoice(state(row, "700000", [first, billedSecond, billedThird]))).toBeNull();
	});

	it("invoice amount = sum of its lines; the period's invoices add up to max(minimum, subtotal); the top-up never exceeds the minimum", () => {
		fc.assert(
			fc.property(
				fc.integer({ min: 0, max: 1000 }),
				fc.integer({ min: 0, max: 2000 }),
				fc.array(fc.integer({ min: 0, max: 400_000 }), { minLength: 1, maxLength: 5 }),
				(base, minimum, increments) => {
					const row = plan(String(base), String(minimum));
					const billed: BilledLine[][] = [];
					let total = 0;
					for (const step of increments) {
						total += step;
						const draft = computeInvoice(state(row, String(total), billed));
						if (draft === null) continue;
						expect(draft.amount.eq(Decimal.sum(draft.lines.map((l) => l.amount)))).toBe(true);
						billed.push(asBilled(draft));
					}
					const all = billed.flat();
					const paid = Decimal.sum(all.map((l) => Decimal.from(l.amount)));
					// Each line is rounded to cents before the lines are added up.
					const usage = roundMoney(Decimal.from(total).mul(Decimal.from("0.001")), "USD");
					const subtotal = Decimal.from(base).add(usage);
					expect(paid.eq(Decimal.max(Decimal.from(minimum), subtotal))).toBe(true);
					const topUps = Decimal.sum(
						all.filter((l) => l.metric === MINIMUM_METRIC).map((l) => Decimal.from(l.amount)),
					);
					expect(topUps.isNegative()).toBe(false);
					expect(topUps.eq(Decimal.max(Decimal.ZERO, Decimal.from(minimum).sub(subtotal)))).toBe(true);
				},
			),
			{ numRuns: 200 },
		);
	});
});
