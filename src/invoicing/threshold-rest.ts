/**
 * The period's regular invoice after threshold invoices (docs/thresholds-and-recurring-credits.md): the base fee,
 * each charge's amount on the whole period less what threshold invoices billed of it, and the minimum computed
 * on the whole period. The discount is the whole period's too, taken from this invoice up to its other lines;
 * what that leaves is granted to the account as a credit (write.ts: discountCreditInsert), so it is never lost.
 */
import type { PeriodWindow } from "../billing-period/period";
import { grantInsert } from "../credits/grants";
import { toMinor } from "../credits/wallet";
import { type Conversion, convertAmount } from "../exchange-rates/convert";
import { Decimal } from "../lib/decimal";
import { DISCOUNT_METRIC } from "../pricing/period-discount";
import type { Billed, BilledLine, ComputedInvoice, ComputedLine, MeteredLine } from "./computed";
import { addUpBilled, extraShares, includedOf, labelOf, regularLine, sharesToJson } from "./computed";
import { lateUsageLineDescription } from "./descriptions";
import { lineKey, partOf } from "./line-keys";

/**
 * A usage line less what earlier invoices of the period billed of its metric: all of it on the first, the rest
 * after. Priced on the period so far, so tiers and included quantities never restart. A converted line bills the
 * difference of the plan-currency amounts, converted at the rate in effect now (docs/currencies.md).
 */
export function usageAfter(
	line: MeteredLine,
	before: Billed | undefined,
	conversion: Conversion | null = null,
): ComputedLine {
	if (line.charge === null || before === undefined) return regularLine(line, conversion);
	const quantity = line.quantity.sub(before.quantity);
	const original =
		conversion === null || line.originalAmount === undefined
			? null
			: { amount: line.originalAmount.sub(before.originalAmount), currency: conversion.from };
	return {
		metric: line.metric,
		description: lateUsageLineDescription(
			labelOf(line.charge),
			quantity,
			line.quantity,
			includedOf(line.charge),
			"previous_invoice",
		),
		quantity,
		amount:
			original === null
				? line.amount.sub(before.amount)
				: convertAmount(original.amount, conversion as Conversion),
		agentShares: sharesToJson(extraShares(line.shares, before)),
		original,
		...partOf(line),
	};
}

export function restOfPeriod(
	metered: readonly MeteredLine[],
	billed: Map<string, Billed>,
	conversion: Conversion | null = null,
): { lines: ComputedLine[]; discountCredited: Decimal } {
	const lines = metered
		.filter((line) => line.metric !== DISCOUNT_METRIC)
		.map((line) => usageAfter(line, billed.get(lineKey(line)), conversion));
	const discount = metered.find((line) => line.metric === DISCOUNT_METRIC);
	if (discount === undefined) return { lines, discountCredited: Decimal.ZERO };
	// A discount is ≤ 0; it takes at most what the other lines come to, never below zero.
	const others = Decimal.sum(lines.map((line) => line.amount));
	const room = others.isNegative() ? Decimal.ZERO : others.negate();
	const taken = discount.amount.lt(room) ? room : discount.amount;
	lines.push({ ...regularLine(discount), amount: taken });
	return { lines, discountCredited: discount.amount.sub(taken) };
}

/** The usage lines of a threshold invoice: each charge so far, less what earlier threshold invoices billed. */
export function thresholdLines(
	metered: readonly MeteredLine[],
	billedLines: BilledLine[],
	conversion: Conversion | null = null,
): ComputedLine[] {
	const billed = addUpBilled(billedLines);
	return metered
		.filter((line) => line.charge !== null)
		.map((line) => usageAfter(line, billed.get(lineKey(line)), conversion))
		.filter((line) => !line.amount.isZero());
}

/**
 * The credit grant of what a regular invoice's discount could not take (restOfPeriod): "<code> discount,
 * YYYY-MM", in the invoice's batch, so the invoice and its credit are stored together or not at all.
 */
export function discountCreditInsert(
	d1: D1Database,
	environment: string,
	window: PeriodWindow,
	draft: ComputedInvoice,
	invoiceId: string,
	now: string,
): D1PreparedStatement[] {
	const credited = draft.discountCredited;
	if (credited === undefined || !credited.isNegative()) return [];
	const amount = credited.negate();
	return grantInsert(d1, environment, {
		// Derived from the invoice: the credit of one invoice's discount is one grant.
		id: `cgr_${invoiceId.slice(4)}`,
		account_id: draft.accountId,
		amount: amount.toString(),
		currency: draft.currency,
		expires_at: null,
		description: `${draft.discountCode ?? "Coupon"} discount, ${window.period}`,
		voided_at: null,
		created_at: now,
		remaining: toMinor(amount, draft.currency).toString(),
	});
}
