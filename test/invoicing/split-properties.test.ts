/**
 * Properties of a period split by plan changes "now" (docs/plan-versions.md#changing-now), over random tiered
 * plans, random change instants and random event timestamps: day rows keyed as the accumulator keys them
 * (lib/day-keys.ts) give every part exactly the events timestamped in it, none twice, none dropped; each part
 * bills what its plan bills for those events alone, its base fee prorated by its seconds; and threshold invoices
 * plus the regular invoice bill exactly the whole period, per metric and per part, to the cent.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { periodWindow } from "../../src/billing-period/period";
import { proratedBaseFee } from "../../src/billing-period/proration";
import { type BilledLine, computeInvoice, type SubscriptionPeriodState } from "../../src/invoicing/computed";
import { lineKey } from "../../src/invoicing/line-keys";
import { type DayRow, dividedUsage, type PeriodPart, partProration } from "../../src/invoicing/period-parts";
import { draftThresholdInvoice } from "../../src/invoicing/threshold-invoices";
import { dayKeyOf } from "../../src/lib/day-keys";
import { Decimal } from "../../src/lib/decimal";
import { quantitiesForPlan } from "../../src/pricing/quantities";
import { rateUsage } from "../../src/pricing/rate";
import type { RatePlanRow } from "../../src/pricing/rate-plans";

const WINDOW = periodWindow("2026-09");
const START = Date.parse(WINDOW.start);
const LENGTH = Date.parse(WINDOW.end) - START;
const iso = (offset: number) => new Date(START + offset).toISOString();

const cents = fc.integer({ min: 1, max: 5000 }).map((n) => n / 1000);
const planArbitrary = fc.record({
	model: fc.constantFrom("tiered", "volume"),
	included: fc.integer({ min: 0, max: 50 }),
	first: fc.integer({ min: 1, max: 200 }),
	prices: fc.tuple(cents, cents, cents),
	calls: cents,
	callsIncluded: fc.integer({ min: 0, max: 5 }),
	base: fc.integer({ min: 0, max: 10000 }).map((n) => n / 100),
	minimum: fc.integer({ min: 0, max: 400 }),
});

function ratePlan(p: PlanSpec, version: number): RatePlanRow {
	return {
		id: "plan_p",
		environment: "live",
		name: "Plan",
		version,
		description: null,
		currency: "USD",
		baseFee: String(p.base),
		minimumAmount: String(p.minimum),
		charges: [
			{
				metric: "tokens",
				source: { kind: "action", type: "llm_call", aggregate: "sum", field: "tokens" },
				model: p.model,
				included_quantity: p.included,
				tiers: [
					{ up_to: p.first, unit_price: p.prices[0] },
					{ up_to: p.first * 3, unit_price: p.prices[1] },
					{ up_to: null, unit_price: p.prices[2] },
				],
			},
			{
				metric: "calls",
				source: { kind: "action", type: "llm_call", aggregate: "count" },
				model: "per_unit",
				unit_price: p.calls,
				included_quantity: p.callsIncluded,
			},
		],
		status: "active",
		createdAt: "2026-01-01T00:00:00.000Z",
		prorate: false,
	};
}
type PlanSpec = typeof planArbitrary extends fc.Arbitrary<infer T> ? T : never;

interface Event {
	at: string;
	tokens: number;
}

/** The day rows the accumulator writes for these events: per day key, their count and token sum. */
function dayRows(events: readonly Event[], splits: readonly string[]): DayRow[] {
	const byKey = new Map<string, { count: number; tokens: number }>();
	for (const event of events) {
		const key = dayKeyOf(event.at, splits);
		const row = byKey.get(key) ?? { count: 0, tokens: 0 };
		row.count++;
		row.tokens += event.tokens;
		byKey.set(key, row);
	}
	return [...byKey].flatMap(([day, row]) => [
		{ day, agentId: null, kind: "action", type: "llm_call", field: "", count: row.count, sum: "0" },
		{
			day,
			agentId: null,
			kind: "action",
			type: "llm_call",
			field: "tokens",
			count: row.count,
			sum: String(row.tokens),
		},
	]);
}

function splitState(plans: readonly RatePlanRow[], splits: readonly string[], events: readonly Event[]) {
	const bounds = plans.map((plan, i) => ({
		startsAt: i === 0 ? WINDOW.start : (splits[i - 1] as string),
		endsAt: splits[i] ?? WINDOW.end,
		plan,
	}));
	const usage = dividedUsage(bounds, dayRows(events, splits));
	const parts: PeriodPart[] = bounds.map((bound, i) => ({
		...bound,
		usage: usage[i] ?? [],
		metrics: [],
		proration: partProration(WINDOW, bound, { startedAt: WINDOW.start, endsAt: null }),
	}));
	return {
		subscriptionId: "sub_p",
		accountId: "acct_p",
		plan: plans[plans.length - 1] as RatePlanRow,
		usage: [],
		sequences: [] as number[],
		billedLines: [] as BilledLine[],
		invoiced: false,
		thresholdSequences: [] as number[],
		parts,
	} satisfies SubscriptionPeriodState;
}

const scenario = fc
	.record({
		plans: fc.array(planArbitrary, { minLength: 1, maxLength: 4 }),
		offsets: fc.uniqueArray(fc.integer({ min: 1, max: LENGTH - 1 }), { maxLength: 3 }),
		events: fc.array(
			fc.record({
				offset: fc.integer({ min: 0, max: LENGTH - 1 }),
				tokens: fc.integer({ min: 0, max: 300 }),
			}),
			{ maxLength: 40 },
		),
		onSplits: fc.array(fc.nat(), { maxLength: 4 }),
		threshold: fc.integer({ min: 1, max: 20000 }).map((n) => n / 100),
	})
	.map(({ plans, offsets, events, onSplits, threshold }) => {
		const splits = offsets.slice(0, plans.length - 1).sort((a, b) => a - b);
		const at = [...events.map((e) => ({ at: iso(e.offset), tokens: e.tokens }))];
		// Events right at a split's instant belong to the part it starts.
		for (const n of onSplits)
			if (splits.length > 0) at.push({ at: iso(splits[n % splits.length] as number), tokens: n % 50 });
		return {
			plans: plans.slice(0, splits.length + 1).map((p, i) => ratePlan(p, i + 1)),
			splits: splits.map(iso),
			events: at.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0)),
			threshold,
		};
	});

describe("a period split by plan changes now", () => {
	it("bills each part for exactly its events, as its plan alone would", () => {
		fc.assert(
			fc.property(scenario, ({ plans, splits, events }) => {
				const state = splitState(plans, splits, events);
				const whole = computeInvoice(state);
				let subtotal = Decimal.ZERO;
				let counted = 0;
				for (const part of state.parts) {
					const mine = events.filter((e) => e.at >= part.startsAt && e.at < part.endsAt);
					counted += mine.length;
					const quantities = quantitiesForPlan(part.plan.charges as never, part.usage);
					expect(quantities.get("calls")?.toString()).toBe(String(mine.length));
					expect(quantities.get("tokens")?.toString()).toBe(String(mine.reduce((n, e) => n + e.tokens, 0)));
					const lines = whole?.lines.filter((line) => line.partStartsAt === part.startsAt) ?? [];
					const alone = rateUsage(
						{ currency: "USD", base_fee: "0", minimum_amount: "0", charges: part.plan.charges as never },
						quantities,
					);
					const fee = proratedBaseFee(Decimal.from(part.plan.baseFee), part.proration, "USD");
					expect(lines.map((line) => [line.metric, line.amount.toString()])).toEqual([
						["base_fee", fee.toString()],
						...alone.charges.map((line) => [line.metric, line.amount.toString()]),
					]);
					subtotal = subtotal.add(Decimal.sum(lines.map((line) => line.amount)));
				}
				expect(counted).toBe(events.length);
				const minimum = Decimal.from((plans[plans.length - 1] as RatePlanRow).minimumAmount);
				const expected = subtotal.lt(minimum) ? minimum : subtotal;
				expect(whole?.amount.toString()).toBe(expected.toString());
			}),
			{ numRuns: 300 },
		);
	});

	it("adds threshold invoices and the regular invoice up to the whole period, per metric and part", () => {
		fc.assert(
			fc.property(scenario, ({ plans, splits, events, threshold }) => {
				const billed: BilledLine[] = [];
				const sequences: number[] = [];
				let thresholdTotal = Decimal.ZERO;
				for (let n = 1; n <= events.length; n++) {
					const state = { ...splitState(plans, splits, events.slice(0, n)), billedLines: billed, sequences };
					const usage = computeInvoice({ ...state, billedLines: [] })?.lines.filter(
						(line) => line.metric === "tokens" || line.metric === "calls",
					);
					const notInvoiced = Decimal.sum((usage ?? []).map((line) => line.amount)).sub(
						Decimal.sum(billed.map((line) => Decimal.from(line.amount))),
					);
					if (notInvoiced.lt(Decimal.from(threshold))) continue;
					const draft = draftThresholdInvoice(
						{ ...state, thresholdSequences: sequences },
						sequences.length + 1,
					);
					if (draft === null) continue;
					thresholdTotal = thresholdTotal.add(draft.amount);
					sequences.push(draft.sequence);
					for (const line of draft.lines) {
						expect(line.partStartsAt).toBeDefined();
						billed.push({
							metric: line.metric,
							quantity: line.quantity.toString(),
							amount: line.amount.toString(),
							agentShares: line.agentShares,
							partStartsAt: line.partStartsAt ?? null,
						});
					}
				}
				const whole = computeInvoice(splitState(plans, splits, events));
				const regular = computeInvoice({
					...splitState(plans, splits, events),
					billedLines: billed,
					sequences,
				});
				expect(regular?.kind).toBe("regular");
				expect(thresholdTotal.add(regular?.amount ?? Decimal.ZERO).toString()).toBe(whole?.amount.toString());
				const key = (line: { metric: string; partStartsAt?: string | null }) =>
					lineKey({ metric: line.metric, part: line.partStartsAt });
				for (const line of whole?.lines ?? []) {
					const sum = (field: "quantity" | "amount") =>
						Decimal.sum(
							[...billed, ...(regular?.lines ?? [])]
								.filter((other) => key(other) === key(line))
								.map((other) => Decimal.from(other[field].toString())),
						);
					if (line.metric === "tokens" || line.metric === "calls") {
						expect(sum("quantity").toString()).toBe(line.quantity.toString());
					}
					expect(sum("amount").toString()).toBe(line.amount.toString());
				}
			}),
			{ numRuns: 150 },
		);
	});
});
