/**
 * Property: threshold invoices plus the period's regular invoice bill exactly what the period bills without
 * thresholds, to the cent — random tiered (graduated and volume) plans with included quantities and minimums,
 * random sequences of usage, random thresholds; each threshold invoice drafted as the queue's handler drafts
 * it, the regular one as generation does. No usage is billed twice or dropped.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
	type AgentUsage,
	type BilledLine,
	computeInvoice,
	type SubscriptionPeriodState,
} from "../../src/invoicing/computed";
import { draftThresholdInvoice } from "../../src/invoicing/threshold-invoices";
import { Decimal } from "../../src/lib/decimal";
import type { RatePlanRow } from "../../src/pricing/rate-plans";

const cents = fc.integer({ min: 1, max: 5000 }).map((n) => n / 1000);

const tieredCharge = fc.record({
	model: fc.constantFrom("tiered", "volume"),
	included: fc.integer({ min: 0, max: 50 }),
	first: fc.integer({ min: 1, max: 200 }),
	prices: fc.tuple(cents, cents, cents),
});

const planOf = (
	charge: fc.Arbitrary<{ model: string; included: number; first: number; prices: [number, number, number] }>,
) =>
	fc.record({
		tokens: charge,
		calls: cents,
		base: fc.integer({ min: 0, max: 100 }),
		minimum: fc.integer({ min: 0, max: 400 }),
	});

function ratePlan(p: {
	tokens: { model: string; included: number; first: number; prices: [number, number, number] };
	calls: number;
	base: number;
	minimum: number;
}): RatePlanRow {
	return {
		id: "plan_p",
		environment: "live",
		name: "Plan",
		description: null,
		currency: "USD",
		baseFee: String(p.base),
		minimumAmount: String(p.minimum),
		charges: [
			{
				metric: "tokens",
				source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
				model: p.tokens.model,
				included_quantity: p.tokens.included,
				tiers: [
					{ up_to: p.tokens.first, unit_price: p.tokens.prices[0] },
					{ up_to: p.tokens.first * 3, unit_price: p.tokens.prices[1] },
					{ up_to: null, unit_price: p.tokens.prices[2] },
				],
			},
			{
				metric: "calls",
				source: { kind: "action", type: "llm_call", aggregate: "count" },
				model: "per_unit",
				unit_price: p.calls,
			},
		],
		status: "active",
		createdAt: "2026-01-01T00:00:00.000Z",
		prorate: false,
	};
}

function usageOf(count: number, tokens: number): AgentUsage[] {
	return [
		{ agentId: null, kind: "action", type: "llm_call", field: "", count, sum: "0" },
		{ agentId: null, kind: "action", type: "llm_call", field: "tokens", count, sum: String(tokens) },
	];
}

function stateOf(plan: RatePlanRow, usage: AgentUsage[], billed: BilledLine[], sequences: number[]) {
	return {
		subscriptionId: "sub_p",
		accountId: "acct_p",
		plan,
		usage,
		sequences,
		billedLines: billed,
		invoiced: false,
		thresholdSequences: sequences,
	} satisfies SubscriptionPeriodState;
}

describe("threshold invoices add up", () => {
	it("to the period's bill without thresholds, to the cent", () => {
		fc.assert(
			fc.property(
				planOf(tieredCharge),
				fc.array(
					fc.record({ count: fc.integer({ min: 0, max: 20 }), tokens: fc.integer({ min: 0, max: 400 }) }),
					{
						minLength: 1,
						maxLength: 25,
					},
				),
				fc.integer({ min: 1, max: 20000 }).map((n) => n / 100),
				(p, steps, threshold) => {
					const plan = ratePlan(p);
					let count = 0;
					let tokens = 0;
					const billed: BilledLine[] = [];
					const sequences: number[] = [];
					let thresholdTotal = Decimal.ZERO;
					for (const step of steps) {
						count += step.count;
						tokens += step.tokens;
						const state = stateOf(plan, usageOf(count, tokens), billed, sequences);
						// The accumulator's judgment: the charge lines so far less what threshold invoices billed.
						const usage = computeInvoice({ ...state, billedLines: [] })?.lines.filter(
							(line) => line.metric === "tokens" || line.metric === "calls",
						);
						const notInvoiced = Decimal.sum((usage ?? []).map((line) => line.amount)).sub(
							Decimal.sum(billed.map((line) => Decimal.from(line.amount))),
						);
						if (notInvoiced.lt(Decimal.from(threshold))) continue;
						const draft = draftThresholdInvoice(state, sequences.length + 1);
						if (draft === null) continue;
						expect(draft.lines.every((line) => line.metric === "tokens" || line.metric === "calls")).toBe(
							true,
						);
						expect(draft.amount.isNegative()).toBe(false);
						thresholdTotal = thresholdTotal.add(draft.amount);
						sequences.push(draft.sequence);
						for (const line of draft.lines) {
							billed.push({
								metric: line.metric,
								quantity: line.quantity.toString(),
								amount: line.amount.toString(),
								agentShares: line.agentShares,
							});
						}
					}
					const final = stateOf(plan, usageOf(count, tokens), billed, sequences);
					const regular = computeInvoice(final);
					const whole = computeInvoice(stateOf(plan, usageOf(count, tokens), [], []));
					expect(regular?.kind).toBe("regular");
					expect(thresholdTotal.add(regular?.amount ?? Decimal.ZERO).toString()).toBe(
						whole?.amount.toString(),
					);
					// Per metric too: quantities and amounts of all invoices add up to the whole period's lines.
					for (const metric of ["tokens", "calls"]) {
						const wholeLine = whole?.lines.find((line) => line.metric === metric);
						const parts = [...billed.filter((line) => line.metric === metric)];
						const rest = regular?.lines.find((line) => line.metric === metric);
						const quantity = Decimal.sum(parts.map((line) => Decimal.from(line.quantity))).add(
							rest?.quantity ?? Decimal.ZERO,
						);
						const amount = Decimal.sum(parts.map((line) => Decimal.from(line.amount))).add(
							rest?.amount ?? Decimal.ZERO,
						);
						expect(quantity.toString()).toBe(wholeLine?.quantity.toString());
						expect(amount.toString()).toBe(wholeLine?.amount.toString());
					}
				},
			),
			{ numRuns: 300 },
		);
	});
});
