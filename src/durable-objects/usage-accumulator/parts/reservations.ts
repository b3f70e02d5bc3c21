/**
 * Budget reservations (docs/reservations.md): an agent holds an amount before it spends it, and the hold fits
 * only while, for every block alert on the period's total amount, spent so far + active holds + the amount ≤ the
 * threshold. Holds live in ONE place per subscription, its head (its only accumulator, or shard 0 of a sharded
 * one), where the budgets are: the check and the insert run in one synchronous transaction of that object, so
 * concurrent reservations are serialised and never together exceed a budget, however many shards count events.
 *
 * A hold ends settled (an event with metadata.reservation_id = its id was counted), released, or expired (at
 * expires_at; applied lazily: reads compute it, the next reservation writes it). An event counted by the head
 * settles its hold in the transaction that counts it. An event counted by another shard is noted there
 * (reservation_settlements) and its id travels with the shard's report to the head after its flush (shards.ts),
 * so the head sees the event's amount and the end of its hold in the same transaction: never both, never neither.
 *
 * A reservation's id carries its subscription's id, so GET and release find the head without a lookup table:
 * `rsv_` + 26 characters of its own (time, then random, sortable like every id) + the subscription id's body.
 */
import { Decimal } from "../../../lib/decimal";
import { newId } from "../../../lib/ids";
import { type AccumulatorIdentity, isHead, parseAccumulatorName } from "../identity";
import { knownRequest, type RequestKey, rememberRequest } from "../storage/reservation-requests";
import { RESERVATIONS_SCHEMA } from "../storage/schema";
import type { MeteringEvent } from "../types";
import { budgetsNow } from "./budgets";
import type { AccumulatorParts } from "./context";
import type { CountObserver } from "./metrics";

// Ended reservations stay readable this long after they expire (or would have).
const RETENTION_MS = 35 * 24 * 3600_000;
// Settlements a shard sends its head per report; the rest go with the next one.
const SETTLEMENTS_PER_REPORT = 1000;

export type ReservationStatus = "held" | "settled" | "released" | "expired";

export interface ReservationView {
	id: string;
	agent_key: string;
	subscription_id: string;
	amount: number;
	currency: string;
	status: ReservationStatus;
	description: string | null;
	expires_at: string;
	created_at: string;
}

/** A budget as entitlements show it: the tightest block alert on the total amount. */
export interface BudgetView {
	alert_id: string;
	threshold: number;
	spent: number;
	held: number;
	available: number;
}

/** A budget a reservation did not fit. */
export interface BudgetShortfall {
	alert_id: string;
	threshold: number;
	spent: number;
	held: number;
	requested: number;
}

export interface ReserveRequest {
	agentKey: string;
	/** Exact decimal, > 0. */
	amount: string;
	ttlSeconds: number;
	description: string | null;
	/** The request's Idempotency-Key, kept with the hold (storage/reservation-requests.ts). */
	request?: RequestKey;
}

/**
 * `replayed`: an earlier request with this Idempotency-Key made the hold; `reused`: that key came with another
 * body.
 */
export type ReserveAnswer =
	| { reservation: ReservationView; replayed?: true }
	| { exceeded: BudgetShortfall[] }
	| { reused: true }
	/** Budgets count in the billing currency, and no rate converts the plan's currency to it now (rates.ts). */
	| { missingRate: { from: string; to: string } };
/** null: no such reservation here. */
export type ReleaseAnswer =
	| { released: ReservationView; replayed?: true }
	| { notHeld: ReservationView }
	| { reused: true }
	| null;

type Row = {
	id: string;
	agent_key: string;
	amount: string;
	currency: string;
	description: string | null;
	status: ReservationStatus;
	created_at: string;
	expires_at: number;
};

const RESERVATION_ID = /^rsv_([0-9a-z]{26})([0-9a-z]+)$/;

/** A new reservation id of the subscription (see the header). */
export function newReservationId(subscriptionId: string): string {
	const body = subscriptionId.startsWith("sub_") ? subscriptionId.slice(4) : "";
	if (!/^[0-9a-z]+$/.test(body)) throw new Error(`Not a subscription id: ${subscriptionId}`);
	return `${newId("rsv")}${body}`;
}

/** The subscription a reservation id belongs to; null when it is not a reservation id. */
export function subscriptionOfReservation(id: string): string | null {
	const match = RESERVATION_ID.exec(id);
	return match ? `sub_${match[2]}` : null;
}

function ensureTables(sql: SqlStorage): void {
	sql.exec(RESERVATIONS_SCHEMA);
}

function tablesExist(sql: SqlStorage): boolean {
	return (
		sql
			.exec<{ n: number }>(
				"SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name = 'reservations'",
			)
			.one().n === 1
	);
}

function viewOf(row: Row, subscriptionId: string, now: number): ReservationView {
	return {
		id: row.id,
		agent_key: row.agent_key,
		subscription_id: subscriptionId,
		amount: Decimal.from(row.amount).toNumber(),
		currency: row.currency,
		status: row.status === "held" && row.expires_at <= now ? "expired" : row.status,
		description: row.description,
		expires_at: new Date(row.expires_at).toISOString(),
		created_at: row.created_at,
	};
}

function readRow(sql: SqlStorage, id: string): Row | undefined {
	return sql
		.exec<Row>(
			"SELECT id, agent_key, amount, currency, description, status, created_at, expires_at FROM reservations WHERE id = ?",
			id,
		)
		.toArray()[0];
}

/** Writes what time already decided: holds past expires_at are expired; long-ended ones go. */
function expireHolds(sql: SqlStorage, now: number): void {
	sql.exec(
		"UPDATE reservations SET status = 'expired', ended_at = ? WHERE status = 'held' AND expires_at <= ?",
		new Date(now).toISOString(),
		now,
	);
	sql.exec("DELETE FROM reservations WHERE expires_at < ? AND status != 'held'", now - RETENTION_MS);
}

function headIdentity(name: string): AccumulatorIdentity {
	const identity = parseAccumulatorName(name);
	if (!isHead(identity))
		throw new Error(`Reservations belong to a subscription's head accumulator, not ${name}`);
	return identity;
}

/** Holds the amount when it fits every budget, in one transaction with the check. */
export async function reserve(
	parts: AccumulatorParts,
	name: string,
	accountId: string | null,
	request: ReserveRequest,
): Promise<ReserveAnswer> {
	const identity = headIdentity(name);
	const { currency, read } = await budgetsNow(parts, identity, Date.now());
	const { store } = parts;
	// The tables of a head that never counted anything are created here (the budget reads the daily rows).
	store.remember(name, accountId);
	ensureTables(store.sql);
	return store.transaction(() => {
		const now = Date.now();
		expireHolds(store.sql, now);
		const known = knownRequest(store.sql, request.request, now);
		if (known !== null) {
			const row = "reused" in known ? undefined : readRow(store.sql, known.reservationId);
			if (row === undefined) return { reused: true };
			return { reservation: viewOf(row, identity.id, now), replayed: true };
		}
		const amount = Decimal.from(request.amount);
		const state = read(now);
		if (state?.missingRate !== undefined) return { missingRate: state.missingRate };
		if (state !== null) {
			const wanted = state.spent.add(state.held).add(amount);
			const over = state.budgets.filter((rule) => wanted.gt(Decimal.from(rule.threshold)));
			if (over.length > 0) {
				return {
					exceeded: over.map((rule) => ({
						alert_id: rule.id,
						threshold: Decimal.from(rule.threshold).toNumber(),
						spent: state.spent.toNumber(),
						held: state.held.toNumber(),
						requested: amount.toNumber(),
					})),
				};
			}
		}
		const row: Row = {
			id: newReservationId(identity.id),
			agent_key: request.agentKey,
			amount: amount.toString(),
			currency,
			description: request.description,
			status: "held",
			created_at: new Date(now).toISOString(),
			expires_at: now + request.ttlSeconds * 1000,
		};
		store.sql.exec(
			`INSERT INTO reservations (id, agent_key, amount, currency, description, status, created_at, expires_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			row.id,
			row.agent_key,
			row.amount,
			row.currency,
			row.description,
			row.status,
			row.created_at,
			row.expires_at,
		);
		rememberRequest(store.sql, request.request, row.id, now);
		return { reservation: viewOf(row, identity.id, now) };
	});
}

/** A reservation held here, as it stands now; null when there is none with this id. */
export function readReservation(parts: AccumulatorParts, name: string, id: string): ReservationView | null {
	const identity = headIdentity(name);
	if (!tablesExist(parts.store.sql)) return null;
	const row = readRow(parts.store.sql, id);
	return row ? viewOf(row, identity.id, Date.now()) : null;
}

/**
 * Ends a hold before it expires; a reservation no longer held is answered as it is, unless this request's
 * Idempotency-Key released it (the repeat of a release whose answer was lost).
 */
export function releaseReservation(
	parts: AccumulatorParts,
	name: string,
	id: string,
	request?: RequestKey,
): ReleaseAnswer {
	const identity = headIdentity(name);
	const { store } = parts;
	if (!tablesExist(store.sql)) return null;
	if (request !== undefined) ensureTables(store.sql);
	return store.transaction(() => {
		const now = Date.now();
		const row = readRow(store.sql, id);
		if (!row) return null;
		const view = viewOf(row, identity.id, now);
		const known = knownRequest(store.sql, request, now);
		if (known !== null) {
			return "reused" in known || known.reservationId !== id
				? { reused: true }
				: { released: view, replayed: true };
		}
		if (view.status !== "held") return { notHeld: view };
		rememberRequest(store.sql, request, id, now);
		store.sql.exec(
			"UPDATE reservations SET status = 'released', ended_at = ? WHERE id = ?",
			new Date(now).toISOString(),
			id,
		);
		return { released: { ...view, status: "released" } };
	});
}

/** The tightest budget (least available) with what was spent and held, or null when there is none. */
export async function tightestBudget(parts: AccumulatorParts, name: string): Promise<BudgetView | null> {
	const identity = headIdentity(name);
	if (parts.alerts.budgets().length === 0 || parts.store.isEmpty) return null;
	const { read } = await budgetsNow(parts, identity, Date.now());
	ensureTables(parts.store.sql);
	const state = read(Date.now());
	// Without a rate in effect the budget cannot be told in its currency: none is shown until one is.
	if (state === null || state.missingRate !== undefined) return null;
	let tightest: { rule: (typeof state.budgets)[number]; available: Decimal } | null = null;
	for (const rule of state.budgets) {
		const available = Decimal.from(rule.threshold).sub(state.spent).sub(state.held);
		if (tightest === null || available.lt(tightest.available)) tightest = { rule, available };
	}
	if (tightest === null) return null;
	return {
		alert_id: tightest.rule.id,
		threshold: Decimal.from(tightest.rule.threshold).toNumber(),
		spent: state.spent.toNumber(),
		held: state.held.toNumber(),
		available: tightest.available.toNumber(),
	};
}

// ---- settlement by events ------------------------------------------------------------------------------------

/** The reservation id an event names, when it is one of this subscription's. */
function reservationIdOf(event: MeteringEvent, subscriptionId: string): string | null {
	const id = event.metadata?.reservation_id;
	if (typeof id !== "string" || subscriptionOfReservation(id) !== subscriptionId) return null;
	return id;
}

/**
 * Watches a subscription accumulator's counting for events that name a reservation: the head settles their holds
 * in the same transaction; another shard notes them for its next report to the head.
 */
export function settlementObserver(identity: AccumulatorIdentity, now: number): CountObserver {
	const ids = new Set<string>();
	return {
		count: (event) => {
			const id = reservationIdOf(event, identity.id);
			if (id !== null) ids.add(id);
		},
		applyTo: (sql) => {
			if (ids.size === 0) return;
			ensureTables(sql);
			if (isHead(identity)) settle(sql, [...ids], now);
			else {
				sql.exec(
					"INSERT OR IGNORE INTO reservation_settlements (reservation_id) SELECT value FROM json_each(?)",
					JSON.stringify([...ids]),
				);
			}
		},
	};
}

/** In the head: the holds of these ids end settled, unless they ended already or expired. */
export function settle(sql: SqlStorage, ids: readonly string[], now: number): void {
	if (ids.length === 0) return;
	ensureTables(sql);
	sql.exec(
		`UPDATE reservations SET status = 'settled', ended_at = ?1
		WHERE id IN (SELECT value FROM json_each(?2)) AND status = 'held' AND expires_at > ?3`,
		new Date(now).toISOString(),
		JSON.stringify(ids),
		now,
	);
}

/** In a shard other than the head: the settlements noted since its last report, for the next one. */
export function pendingSettlements(sql: SqlStorage): string[] {
	if (!tablesExist(sql)) return [];
	return sql
		.exec<{ reservation_id: string }>(
			"SELECT reservation_id FROM reservation_settlements LIMIT ?",
			SETTLEMENTS_PER_REPORT,
		)
		.toArray()
		.map((row) => row.reservation_id);
}

/** After the head received them. */
export function forgetSettlements(sql: SqlStorage, ids: readonly string[]): void {
	if (ids.length === 0) return;
	sql.exec(
		"DELETE FROM reservation_settlements WHERE reservation_id IN (SELECT value FROM json_each(?))",
		JSON.stringify(ids),
	);
}
