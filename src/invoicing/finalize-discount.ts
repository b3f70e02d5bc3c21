/**
 * A draft regular invoice after threshold invoices (docs/thresholds-and-recurring-credits.md): its discount is
 * taken up to its other lines, and what that leaves becomes a credit grant, "<code> discount, YYYY-MM", as for
 * an invoice issued directly (threshold-rest.ts). A draft stores no such grant; finalizing it does, in the batch
 * that issues it, so a draft finalized once grants once.
 */
import { periodWindow } from "../billing-period/period";
import type { Db } from "../db/client";
import type { Scope } from "../db/scope";
import { computeInvoice } from "./computed";
import type { InvoiceRow } from "./invoices";
import { thresholdPeriodOf } from "./threshold-invoices";
import { discountCreditInsert } from "./threshold-rest";

/** The draft's period rated again as its refresh does, when its discount leaves something to grant. */
export async function draftDiscountCredit(db: Db, scope: Scope, draft: InvoiceRow) {
	if (draft.kind !== "regular" || draft.subscriptionId === null) return null;
	const found = await thresholdPeriodOf(db, scope, draft.subscriptionId, draft.billingPeriod);
	if (!found) return null;
	const { state } = found;
	const metered = computeInvoice({
		...state,
		invoiced: false,
		invoicedWhileOpen: false,
		billedLines: state.thresholdLines ?? [],
	});
	if (metered?.discountCredited === undefined || !metered.discountCredited.isNegative()) return null;
	return { ...metered, accountId: draft.accountId, currency: draft.currency };
}

/** The grant's statements and the invoice's discount_credited, for the batch that issues the draft. */
export function discountCreditStatements(
	d1: D1Database,
	scope: Scope,
	draft: InvoiceRow,
	metered: Awaited<ReturnType<typeof draftDiscountCredit>>,
	now: string,
): D1PreparedStatement[] {
	if (metered === null) return [];
	return [
		d1
			.prepare("UPDATE invoices SET discount_credited = ?3 WHERE environment = ?1 AND id = ?2")
			.bind(scope.environment, draft.id, (metered.discountCredited ?? 0).toString()),
		...discountCreditInsert(d1, scope.environment, periodWindow(draft.billingPeriod), metered, draft.id, now),
	];
}
