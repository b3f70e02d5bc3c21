/**
 * What one subscription owes for one period, given what is already invoiced. Pure: the loader (load.ts) brings
 * the period's usage, the plan in effect and the earlier invoices; the writer (write.ts) stores the result.
 *
 * - No live (non-void) invoice yet → a regular invoice: the base fee and every charge, zero lines included, so
 *   the customer sees everything that was metered.
 * - Otherwise the period's full usage is rated again and each metric's quantity and amount are compared with
 *   what the live invoices billed; the differences, if any, make a supplementary invoice. Re-rating the whole
 *   period (instead of pricing only the late units) keeps tiers right: late units are priced where they fall.
 *   A supplementary invoice is made only when some amount differs: more units inside the included quantity
 *   change nothing the customer owes, and an invoice of 0 would only be noise (docs/billing.md#invoices).
 */

import {
	type BaseFeeProration,
	proratedBaseFeeDescription,
	rateWithProration,
} from "../billing-period/proration";
import { type Conversion, convertAmount } from "../exchange-rates/convert";
import { convertRated } from "../exchange-rates/rated";
import type { ExchangeRate } from "../exchange-rates/rates";
import { Decimal } from "../lib/decimal";
import type { Charge } from "../pricing/charges";
import {
	DISCOUNT_METRIC,
	discountDescription,
	type PeriodDiscount,
	withDiscount,
} from "../pricing/period-discount";
import { quantitiesForPlan, type UsageAggregate } from "../pricing/quantities";
import { BASE_FEE_METRIC, MINIMUM_METRIC } from "../pricing/rate";
import { type RatePlanRow, ratePlanPricing } from "../pricing/rate-plans";
import type { MetricQuantity } from "../pricing/sources";
import {
	BASE_FEE_DESCRIPTION,
	formatQuantity,
	lateUsageLineDescription,
	MINIMUM_DESCRIPTION,
	usageLineDescription,
} from "./descriptions";
import { keyParts, lineKey, partOf } from "./line-keys";
import type { PeriodPart } from "./period-parts";
import { rateTheParts } from "./split-rating";
import { restOfPeriod } from "./threshold-rest";

export interface AgentShare {
	/** null: instances not assigned to any agent. */
	agent_id: string | null;
	quantity: string;
}

/** Usage of the period, already added up per agent (the same aggregate may appear once per agent). */
export interface AgentUsage extends UsageAggregate {
	agentId: string | null;
}

/** Quantities of filtered, max and unique_count sources (pricing/sources.ts), one row per instance. */
export interface AgentMetric extends MetricQuantity {
	agentId: string | null;
}

export interface BilledLine {
	metric: string;
	quantity: string;
	amount: string;
	agentShares: AgentShare[] | null;
	/** Its amount before conversion (docs/currencies.md); null when it was computed in the invoice's currency. */
	originalAmount?: string | null;
	/** The first instant of the part of a split period it billed (split-rating.ts); null or absent: the period. */
	partStartsAt?: string | null;
}

export interface SubscriptionPeriodState {
	subscriptionId: string;
	accountId: string;
	plan: RatePlanRow;
	usage: AgentUsage[];
	/** The period's quantities of the sources the daily aggregates cannot answer; none when absent. */
	metrics?: AgentMetric[];
	/** Sequences of every invoice of the period, void ones included (a sequence is never reused). */
	sequences: number[];
	/** Lines of the period's non-void invoices. */
	billedLines: BilledLine[];
	/** Those of threshold invoices (threshold-invoices.ts); what a draft regular invoice leaves to them. */
	thresholdLines?: BilledLine[];
	/** Whether a non-void invoice of the period exists, threshold invoices apart. */
	invoiced: boolean;
	/** The request numbers of the period's threshold invoices, void ones included (threshold-invoices.ts). */
	thresholdSequences?: number[];
	/**
	 * Whether the first of those invoices was issued before the period ended: then what came after it is usage
	 * since the previous invoice, not late usage.
	 */
	invoicedWhileOpen?: boolean;
	/** Set when the plan prorates and the subscription was not active the whole period (proration.ts). */
	baseFeeProration?: BaseFeeProration | null;
	/** The coupon applied to the period, if any: its line comes after the minimum's top-up (docs/discounts.md). */
	discount?: PeriodDiscount | null;
	/** The currency its invoices are in; the plan's when absent. */
	billingCurrency?: string;
	/** How the plan's currency converts to the billing currency now; null or absent when they are the same. */
	conversion?: Conversion | null;
	/** The parts of a period split by plan changes "now" (period-parts.ts); absent for a period of one part. */
	parts?: PeriodPart[];
}

export interface ComputedLine {
	metric: string;
	description: string;
	quantity: Decimal;
	amount: Decimal;
	agentShares: AgentShare[] | null;
	/** The amount before conversion, in the plan's currency; null or absent for a line in the invoice's currency. */
	original?: { amount: Decimal; currency: string } | null;
	partStartsAt?: string; // The first instant of its part of a split period (split-rating.ts).
}

export interface ComputedInvoice {
	subscriptionId: string;
	accountId: string;
	ratePlanId: string;
	kind: "regular" | "supplementary" | "threshold";
	sequence: number;
	currency: string;
	amount: Decimal;
	lines: ComputedLine[];
	/** A threshold invoice's request number (threshold-invoices.ts). */
	thresholdSequence?: number;
	/** What the discount could not take off this regular invoice, granted as a credit (≤ 0; threshold-rest.ts). */
	discountCredited?: Decimal;
	/** The coupon's code, naming the credit of discountCredited. */
	discountCode?: string;
	/** The stored rate its lines were converted at; null or absent without conversion. */
	exchangeRate?: ExchangeRate | null;
}

export interface MeteredLine {
	metric: string;
	charge: Charge | null;
	quantity: Decimal;
	amount: Decimal;
	shares: Map<string | null, Decimal> | null;
	/** How the base fee line reads: "Base fee", or how it was prorated. */
	baseFeeDescription?: string;
	/** How the discount line reads: the coupon's code and what it takes off. */
	label?: string;
	/** The amount in the plan's currency of a converted line (docs/currencies.md). */
	originalAmount?: Decimal;
	/** The first instant of its part of a split period (split-rating.ts); absent on a period of one part. */
	part?: string;
}

export const labelOf = (charge: Charge) => charge.description?.trim() || charge.metric;
export const includedOf = (charge: Charge) => Decimal.from(charge.included_quantity ?? 0);

function byAgent<T extends { agentId: string | null }>(rows: readonly T[]): Map<string | null, T[]> {
	const groups = new Map<string | null, T[]>();
	for (const row of rows) {
		const list = groups.get(row.agentId);
		if (list) list.push(row);
		else groups.set(row.agentId, [row]);
	}
	return groups;
}

/**
 * Each metric's quantity split by agent; the parts add up to the metric's quantity. A max is not a sum of
 * parts: it is the agent's whose events reached it (the first such agent by id on a tie).
 */
export function sharesByMetric(charges: readonly Charge[], usage: AgentUsage[], metrics: AgentMetric[]) {
	const usageOf = byAgent(usage);
	const metricsOf = byAgent(metrics);
	const shares = new Map<string, Map<string | null, Decimal>>(charges.map((c) => [c.metric, new Map()]));
	for (const agentId of new Set([...usageOf.keys(), ...metricsOf.keys()])) {
		const quantities = quantitiesForPlan(charges, usageOf.get(agentId) ?? [], metricsOf.get(agentId) ?? []);
		for (const [metric, quantity] of quantities) {
			if (!quantity.isZero()) shares.get(metric)?.set(agentId, quantity);
		}
	}
	for (const charge of charges) {
		if (charge.source.aggregate !== "max") continue;
		const parts = shares.get(charge.metric) as Map<string | null, Decimal>;
		const top = [...parts].sort(([a, x], [b, y]) => y.compare(x) || String(a).localeCompare(String(b)))[0];
		shares.set(charge.metric, new Map(top ? [top] : []));
	}
	return shares;
}

/** The period's full usage, rated by the plan in effect: one line per charge, the base fee first. */
export function rateThePeriod(state: SubscriptionPeriodState): MeteredLine[] {
	if (state.parts !== undefined) return rateTheParts(state, state.parts);
	const pricing = ratePlanPricing(state.plan);
	const metrics = state.metrics ?? [];
	const quantities = quantitiesForPlan(pricing.charges, state.usage, metrics);
	const shares = sharesByMetric(pricing.charges, state.usage, metrics);
	const charges = new Map(pricing.charges.map((c) => [c.metric, c]));
	const proration = state.baseFeeProration ?? null;
	const inPlanCurrency = rateWithProration(pricing, quantities, proration);
	const conversion = state.conversion ?? null;
	// Converted per line before the discount, which is computed in the billing currency.
	const converted = conversion === null ? null : convertRated(inPlanCurrency, pricing, conversion);
	const discounted = withDiscount(converted?.rated ?? inPlanCurrency, state.discount ?? null);
	return discounted.charges.map((rated) => ({
		metric: rated.metric,
		charge: charges.get(rated.metric) ?? null,
		quantity: rated.quantity,
		amount: rated.amount,
		shares:
			rated.metric === BASE_FEE_METRIC || rated.metric === MINIMUM_METRIC || rated.metric === DISCOUNT_METRIC
				? null
				: (shares.get(rated.metric) ?? new Map()),
		baseFeeDescription: proration === null ? BASE_FEE_DESCRIPTION : proratedBaseFeeDescription(proration),
		...(rated.metric === DISCOUNT_METRIC && state.discount
			? { label: discountDescription(state.discount) }
			: {}),
		...(converted?.originals.has(rated.metric)
			? { originalAmount: converted.originals.get(rated.metric) }
			: {}),
	}));
}

export function sharesToJson(shares: Map<string | null, Decimal> | null): AgentShare[] | null {
	if (shares === null) return null;
	return [...shares]
		.filter(([, quantity]) => !quantity.isZero())
		.sort(([a], [b]) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : a < b ? -1 : 1))
		.map(([agent_id, quantity]) => ({ agent_id, quantity: quantity.toString() }));
}

/** A line without a charge: the minimum's top-up, the base fee (prorated or not), or the discount. */
function flatDescription(line: MeteredLine): string {
	if (line.metric === MINIMUM_METRIC) return MINIMUM_DESCRIPTION;
	if (line.label !== undefined) return line.label;
	return line.baseFeeDescription ?? BASE_FEE_DESCRIPTION;
}

/** A converted line's original amount, in the plan's currency. */
function originalOf(amount: Decimal | undefined, conversion: Conversion | null | undefined) {
	return amount === undefined || !conversion ? null : { amount, currency: conversion.from };
}

export function regularLine(line: MeteredLine, conversion?: Conversion | null): ComputedLine {
	const description =
		line.charge === null
			? flatDescription(line)
			: usageLineDescription(labelOf(line.charge), line.quantity, includedOf(line.charge));
	return {
		metric: line.metric,
		description,
		quantity: line.quantity,
		amount: line.amount,
		agentShares: sharesToJson(line.shares),
		original: originalOf(line.originalAmount, conversion),
		...partOf(line),
	};
}

export interface Billed {
	quantity: Decimal;
	amount: Decimal;
	/** In the plan's currency: the amounts before conversion (the amount where there was none). */
	originalAmount: Decimal;
	shares: Map<string | null, Decimal>;
}

export function addUpBilled(lines: BilledLine[]): Map<string, Billed> {
	const billed = new Map<string, Billed>();
	for (const line of lines) {
		const key = lineKey({ metric: line.metric, part: line.partStartsAt });
		const sum = billed.get(key) ?? {
			quantity: Decimal.ZERO,
			amount: Decimal.ZERO,
			originalAmount: Decimal.ZERO,
			shares: new Map(),
		};
		sum.quantity = sum.quantity.add(Decimal.from(line.quantity));
		sum.amount = sum.amount.add(Decimal.from(line.amount));
		sum.originalAmount = sum.originalAmount.add(Decimal.from(line.originalAmount ?? line.amount));
		for (const share of line.agentShares ?? []) {
			const before = sum.shares.get(share.agent_id) ?? Decimal.ZERO;
			sum.shares.set(share.agent_id, before.add(Decimal.from(share.quantity)));
		}
		billed.set(key, sum);
	}
	return billed;
}

/**
 * The agents' part of the extra quantity: what each has now minus what was billed for it. If an instance moved
 * to another agent in between, a part could turn negative; then the shares of the whole period are used.
 */
export function extraShares(now: Map<string | null, Decimal> | null, before: Billed | undefined) {
	if (now === null) return null;
	const extra = new Map<string | null, Decimal>();
	for (const agentId of new Set([...now.keys(), ...(before?.shares.keys() ?? [])])) {
		const part = (now.get(agentId) ?? Decimal.ZERO).sub(before?.shares.get(agentId) ?? Decimal.ZERO);
		if (part.isNegative()) return now;
		extra.set(agentId, part);
	}
	return extra;
}

function differenceLine(
	line: MeteredLine,
	before: Billed | undefined,
	since: "late" | "previous_invoice" = "late",
	conversion: Conversion | null = null,
): ComputedLine | null {
	const quantity = line.quantity.sub(before?.quantity ?? Decimal.ZERO);
	// A converted line: the difference of the plan-currency amounts, converted now (a new rate alone bills nothing).
	const originalDifference =
		line.originalAmount === undefined || conversion === null
			? null
			: line.originalAmount.sub(before?.originalAmount ?? Decimal.ZERO);
	const amount =
		originalDifference === null
			? line.amount.sub(before?.amount ?? Decimal.ZERO)
			: convertAmount(originalDifference, conversion as Conversion);
	const changed = originalDifference ?? amount;
	// A discount is one line a period whatever invoices carried it: only its amount can differ.
	if (changed.isZero() && (quantity.isZero() || line.metric === DISCOUNT_METRIC)) return null;
	let description: string;
	// A discount line reads as the coupon says on every invoice; the others say they adjust what was billed.
	if (line.metric === DISCOUNT_METRIC) description = flatDescription(line);
	else if (line.charge === null) description = `${flatDescription(line)} — adjustment`;
	else if (quantity.isNegative() || quantity.isZero()) {
		description = `${labelOf(line.charge)} — adjustment of ${formatQuantity(quantity)} units`;
	} else {
		description = lateUsageLineDescription(
			labelOf(line.charge),
			quantity,
			line.quantity,
			includedOf(line.charge),
			since,
		);
	}
	return {
		metric: line.metric,
		description,
		// On a supplementary invoice too, the discount line is one discount: what it adds to the period's.
		quantity: line.metric === DISCOUNT_METRIC ? Decimal.from(1) : quantity,
		amount,
		agentShares: sharesToJson(extraShares(line.shares, before)),
		original: originalOf(originalDifference ?? undefined, conversion),
		...partOf(line),
	};
}

/** The invoice this subscription needs now for the period, or null when everything is already billed. */
export function computeInvoice(state: SubscriptionPeriodState): ComputedInvoice | null {
	const metered = rateThePeriod(state);
	const conversion = state.conversion ?? null;
	let lines: ComputedLine[];
	let discountCredited: Decimal | undefined;
	if (!state.invoiced) {
		// After threshold invoices, the rest of the period (threshold-rest.ts).
		const rest =
			state.billedLines.length > 0 ? restOfPeriod(metered, addUpBilled(state.billedLines), conversion) : null;
		lines = rest?.lines ?? metered.map((line) => regularLine(line, conversion));
		discountCredited = rest?.discountCredited;
	} else {
		const billed = addUpBilled(state.billedLines);
		const since = state.invoicedWhileOpen ? "previous_invoice" : "late";
		lines = metered.flatMap(
			(line) => differenceLine(line, billed.get(lineKey(line)), since, conversion) ?? [],
		);
		// A metric billed earlier that the period no longer has: the minimum's top-up once usage reached the
		// minimum (its credit keeps the period's total at the minimum, never above what was used), or a metric
		// the plan no longer has (it cannot happen with one plan per period, but a credit is the honest answer).
		const ratedMetrics = new Set(metered.map(lineKey));
		for (const [key, before] of billed) {
			if (ratedMetrics.has(key)) continue;
			const { metric, part } = keyParts(key);
			const line = differenceLine(
				{ metric, charge: null, quantity: Decimal.ZERO, amount: Decimal.ZERO, shares: null, part },
				before,
			);
			if (line) {
				const label = metric === MINIMUM_METRIC ? MINIMUM_DESCRIPTION : metric;
				lines.push({ ...line, description: `${label} — adjustment` });
			}
		}
		if (lines.every((line) => line.amount.isZero())) return null;
	}
	return {
		subscriptionId: state.subscriptionId,
		accountId: state.accountId,
		ratePlanId: state.plan.id,
		kind: state.invoiced ? "supplementary" : "regular",
		sequence: Math.max(0, ...state.sequences) + 1,
		// Unconverted (a reader that did not ask for a rate) it stays in the plan's currency, never mislabelled.
		currency: conversion?.to ?? state.plan.currency,
		amount: Decimal.sum(lines.map((line) => line.amount)),
		lines,
		...(discountCredited === undefined || discountCredited.isZero()
			? {}
			: { discountCredited, discountCode: state.discount?.code ?? "" }),
		exchangeRate: conversion?.rate ?? null,
	};
}
