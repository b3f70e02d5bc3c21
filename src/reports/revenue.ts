import { eq, gte, lte, ne, sql } from "drizzle-orm";
import { type CreditedLine, creditNoteRevenueLines } from "../credit-notes/revenue-lines";
import type { Db } from "../db/client";
import { accounts, agents, invoices, ratePlans } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { billedLines } from "../invoicing/billed-lines";
import { periodsStartingIn } from "../lib/date-range";
import { allocate, Decimal } from "../lib/decimal";
import { minorUnits } from "../lib/money";

export type RevenueGrouping = "agent" | "customer" | "product";

/** A line of revenue: an invoice line, or what a credit note took back from one (negative), of the same shape. */
export type RevenueLine = CreditedLine;

export interface BreakdownItem {
	id: string | null;
	name: string;
	revenue: Decimal;
}

const BASE_FEE_METRIC = "base_fee";
export const UNATTRIBUTED = "unattributed";

/**
 * Revenue is read from invoice lines (an aggregate already), never from events: the lines of invoices that are
 * not void, whose billing period starts within the range, in one currency — net of their credit notes, which
 * come as negative lines split like their invoice's (credit-notes/revenue-lines.ts).
 */
export async function revenueLines(
	db: Db,
	scope: Scope,
	range: { start: Date; end: Date },
	currency: string,
	/** Count drafts too: the live margins of the open period, where they are what the period would bill. */
	options: { drafts?: boolean } = {},
): Promise<RevenueLine[]> {
	const periods = periodsStartingIn(range);
	if (!periods) return [];
	const billed = await billedLines(
		db,
		scope,
		{ billingPeriod: invoices.billingPeriod, accountId: invoices.accountId, ratePlanId: invoices.ratePlanId },
		eq(invoices.currency, currency),
		// A draft is not issued yet: it is revenue once finalized (docs/credit-notes.md#draft-invoices).
		options.drafts === true ? sql`1` : ne(invoices.status, "draft"),
		gte(invoices.billingPeriod, periods.first),
		lte(invoices.billingPeriod, periods.last),
	);
	const credited = await creditNoteRevenueLines(db, scope, periods, currency);
	return [...billed.map((row) => ({ ...row, amount: Decimal.from(row.amount) })), ...credited];
}

function addTo(totals: Map<string | null, Decimal>, id: string | null, amount: Decimal) {
	totals.set(id, (totals.get(id) ?? Decimal.ZERO).add(amount));
}

/** Each usage line split across agents by their share of the metric's quantity, to the currency's minor unit. */
function revenueByAgent(lines: RevenueLine[], currency: string): Map<string | null, Decimal> {
	const totals = new Map<string | null, Decimal>();
	for (const line of lines) {
		const shares = line.metric === BASE_FEE_METRIC ? [] : (line.agentShares ?? []);
		if (shares.length === 0) {
			addTo(totals, null, line.amount);
			continue;
		}
		const parts = allocate(
			line.amount,
			shares.map((s) => Decimal.from(s.quantity)),
			minorUnits(currency),
		);
		for (const [i, share] of shares.entries()) addTo(totals, share.agent_id, parts[i] as Decimal);
	}
	return totals;
}

/** Revenue per entity of the grouping (null: unattributed); the parts add up to the lines' total exactly. */
export function revenueTotals(
	lines: RevenueLine[],
	groupBy: RevenueGrouping,
	currency: string,
): Map<string | null, Decimal> {
	if (groupBy === "agent") return revenueByAgent(lines, currency);
	const totals = new Map<string | null, Decimal>();
	for (const line of lines) {
		addTo(totals, groupBy === "customer" ? line.accountId : line.ratePlanId, line.amount);
	}
	return totals;
}

export async function revenueBreakdown(
	db: Db,
	scope: Scope,
	lines: RevenueLine[],
	groupBy: RevenueGrouping,
	currency: string,
): Promise<BreakdownItem[]> {
	const totals = revenueTotals(lines, groupBy, currency);
	const ids = [...totals.keys()].filter((id): id is string => id !== null);
	return namedBreakdown(totals, await namesOf(db, scope, groupBy, ids));
}

/** Breakdown rows of these totals under these names, revenue descending (then id). */
export function namedBreakdown(
	totals: Map<string | null, Decimal>,
	names: Map<string, string>,
): BreakdownItem[] {
	return [...totals]
		.map(([id, revenue]) => ({ id, name: id === null ? UNATTRIBUTED : (names.get(id) ?? id), revenue }))
		.sort((a, b) => b.revenue.compare(a.revenue) || String(a.id).localeCompare(String(b.id)));
}

export async function namesOf(
	db: Db,
	scope: Scope,
	groupBy: RevenueGrouping,
	ids: string[],
): Promise<Map<string, string>> {
	if (ids.length === 0) return new Map();
	const table = { agent: agents, customer: accounts, product: ratePlans }[groupBy];
	// One JSON parameter for the ids: a breakdown may name more entities than D1's 100 bound parameters.
	const rows = await db
		.select({ id: table.id, name: table.name })
		.from(table)
		.where(inScope(scope, table, sql`${table.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`));
	return new Map(rows.map((r) => [r.id, r.name]));
}
