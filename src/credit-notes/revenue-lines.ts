/**
 * Revenue net of credit notes (docs/credit-notes.md): a credit note lowers the revenue of its invoice's billing
 * period, customer and product whenever it was issued, and by agent it is split like the invoice's revenue. So
 * each credit note becomes negative copies of its invoice's lines, its amount allocated over the lines that billed
 * something (in proportion to their amounts, to the currency's minor unit, so the parts add up exactly); each
 * copy keeps its line's metric and agent shares, and the revenue reports split it as they split the line.
 */
import { and, asc, eq, gte, inArray, lte, ne } from "drizzle-orm";
import type { Db } from "../db/client";
import { creditNotes, invoiceLines, invoices } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { allocate, Decimal } from "../lib/decimal";
import { minorUnits } from "../lib/money";

export interface CreditedLine {
	billingPeriod: string;
	accountId: string;
	ratePlanId: string;
	metric: string;
	amount: Decimal;
	agentShares: { agent_id: string | null; quantity: string }[] | null;
}

interface InvoiceLine {
	invoiceId: string;
	metric: string;
	amount: string;
	agentShares: { agent_id: string | null; quantity: string }[] | null;
}

/** Negative lines for the credit notes of live invoices in `currency` whose billing period is first…last. */
export async function creditNoteRevenueLines(
	db: Db,
	scope: Scope,
	periods: { first: string; last: string },
	currency: string,
): Promise<CreditedLine[]> {
	const inRange = and(
		inScope(scope, invoices),
		ne(invoices.status, "void"),
		eq(invoices.currency, currency),
		gte(invoices.billingPeriod, periods.first),
		lte(invoices.billingPeriod, periods.last),
	);
	const credited = db
		.selectDistinct({ id: creditNotes.invoiceId })
		.from(creditNotes)
		.innerJoin(invoices, eq(invoices.id, creditNotes.invoiceId))
		.where(and(inScope(scope, creditNotes), inRange));
	const [notes, lines] = await db.batch([
		db
			.select({
				invoiceId: creditNotes.invoiceId,
				amount: creditNotes.amount,
				billingPeriod: invoices.billingPeriod,
				accountId: invoices.accountId,
				ratePlanId: invoices.ratePlanId,
			})
			.from(creditNotes)
			.innerJoin(invoices, eq(invoices.id, creditNotes.invoiceId))
			.where(and(inScope(scope, creditNotes), inRange))
			.orderBy(asc(creditNotes.number)),
		db
			.select({
				invoiceId: invoiceLines.invoiceId,
				metric: invoiceLines.metric,
				amount: invoiceLines.amount,
				agentShares: invoiceLines.agentShares,
			})
			.from(invoiceLines)
			.where(and(inScope(scope, invoiceLines), inArray(invoiceLines.invoiceId, credited)))
			.orderBy(asc(invoiceLines.invoiceId), asc(invoiceLines.position)),
	]);
	const linesOf = new Map<string, InvoiceLine[]>();
	for (const line of lines) linesOf.set(line.invoiceId, [...(linesOf.get(line.invoiceId) ?? []), line]);
	return notes.flatMap((note) => {
		const billing = (linesOf.get(note.invoiceId) ?? []).filter((line) =>
			Decimal.from(line.amount).gt(Decimal.ZERO),
		);
		const where = {
			billingPeriod: note.billingPeriod,
			accountId: note.accountId,
			ratePlanId: note.ratePlanId,
		};
		const amount = Decimal.from(note.amount).negate();
		if (billing.length === 0) return [{ ...where, metric: "credit_note", amount, agentShares: null }];
		const parts = allocate(
			amount,
			billing.map((line) => Decimal.from(line.amount)),
			minorUnits(currency),
		);
		return billing.map((line, i) => ({
			...where,
			metric: line.metric,
			amount: parts[i] as Decimal,
			agentShares: line.agentShares,
		}));
	});
}
