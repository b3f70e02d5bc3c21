/**
 * The rows of the running aggregates and their statements (the meaning of each table: parts/aggregates.ts):
 * what a counting pass reads before it adds, and the upserts that write its sums; the amounts of the cost tables;
 * usage read back between two days. Sums are exact decimal strings; `version` counts changes of a row, so a
 * flush can tell whether it changed while D1 was being written.
 */
import { Decimal } from "../../../lib/decimal";
import type { UsageAggregate } from "../../../pricing/quantities";
import { type StoredValues, storedBefore } from "./stored-values";

/** Where a day's aggregates are kept: the billable ones, or those of events outside the subscription (docs/billing.md#subscription-lifecycle). */
export type DailyTable = "daily" | "daily_unbilled";

// Type aliases, not interfaces: SqlStorage's row type needs an index signature.
export type DailyRow = {
	day: string;
	agent_key: string;
	kind: "action" | "outcome";
	type: string;
	field: string;
	count: number;
	sum: string;
	version: number;
};

export type CostRow = {
	period: string;
	agent_key: string;
	cost_type: string;
	currency: string;
	amount: string;
	version: number;
};

export type ModelCostRow = {
	period: string;
	agent_key: string;
	model: string;
	currency: string;
	amount: string;
	version: number;
};

export type UnpricedRow = {
	period: string;
	/** "" when the events name no provider. */
	provider: string;
	model: string;
	events: number;
	input_tokens: string;
	output_tokens: string;
	cached_input_tokens: string;
	reasoning_tokens: string;
	version: number;
};

// Separates the parts of a row's key in the maps: days, agent keys, kinds and types never contain it.
export const SEPARATOR = "\u0000";

// Up to this many rows are written by one statement with bound values (7 per row), cheaper than json_each for
// the few rows of most calls (an event's own row and one per numeric metadata field).
export const FEW_ROWS = 8;
const upsertDailyRows = (table: DailyTable, rows: number) =>
	`INSERT INTO ${table} (day, agent_key, kind, type, field, count, sum, version)
	VALUES ${Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, ?, ?, 1)").join(", ")}
	ON CONFLICT (day, agent_key, kind, type, field)
	DO UPDATE SET count = count + excluded.count, sum = excluded.sum, version = version + 1`;
// By table, then by number of rows (index 0 unused): the texts are built once, so the runtime's statement cache
// sees the same few.
const UPSERT_DAILY_ROWS = {
	daily: Array.from({ length: FEW_ROWS + 1 }, (_, n) => upsertDailyRows("daily", n)),
	daily_unbilled: Array.from({ length: FEW_ROWS + 1 }, (_, n) => upsertDailyRows("daily_unbilled", n)),
};

/**
 * What the store remembers of the aggregate rows it wrote: the sums of the day rows of one table, and the amounts
 * of the cost rows, which both day tables add to. Every writer of those rows passes them, or clears them.
 */
export interface KnownSums {
	daily: StoredValues;
	/** By the row's key as JSON: [period, agent key, cost type, currency]. */
	costs: StoredValues;
	/** By the row's key as JSON: [period, agent key, model, currency]. */
	modelCosts: StoredValues;
}

type AmountTable = "costs" | "model_costs";

// The column that, with period, agent key and currency, keys a row of each amount table.
const AMOUNT_KEY: Record<AmountTable, string> = { costs: "cost_type", model_costs: "model" };

// One row (a single event's cost, the common case) by bound values; more as one JSON parameter.
const upsertAmounts = (table: AmountTable, rows: string) =>
	`INSERT INTO ${table} (period, agent_key, ${AMOUNT_KEY[table]}, currency, amount, version)
	${rows}
	ON CONFLICT (period, agent_key, ${AMOUNT_KEY[table]}, currency)
	DO UPDATE SET amount = excluded.amount, version = version + 1`;
const UPSERT_AMOUNTS = Object.fromEntries(
	(["costs", "model_costs"] as const).map((table) => [
		table,
		{
			one: upsertAmounts(table, "VALUES (?, ?, ?, ?, ?, 1)"),
			many: upsertAmounts(
				table,
				`SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, 1
				FROM json_each(?) AS r WHERE true`,
			),
		},
	]),
) as Record<AmountTable, { one: string; many: string }>;

/**
 * Adds amounts, by the row's key as JSON, to a table of costs: the stored amount from `known` where it has it
 * (a warm call writes without reading), the others read in one statement.
 */
export function applyAmounts(
	sql: SqlStorage,
	table: AmountTable,
	deltas: ReadonlyMap<string, Decimal>,
	signed: (value: Decimal) => Decimal,
	known: StoredValues | undefined,
): void {
	if (deltas.size === 0) return;
	const keys = [...deltas.keys()];
	const before = storedBefore(keys, known, (unknown) =>
		sql
			.exec<{ i: number; amount: string }>(
				`SELECT k.key AS i, c.amount FROM json_each(?) AS k
				JOIN ${table} AS c ON c.period = k.value ->> 0 AND c.agent_key = k.value ->> 1
					AND c.${AMOUNT_KEY[table]} = k.value ->> 2 AND c.currency = k.value ->> 3`,
				`[${unknown.map((i) => keys[i]).join(",")}]`,
			)
			.toArray()
			.map((row): [number, string] => [row.i, row.amount]),
	);
	const rows = keys.map((key, i) => {
		const stored = before[i];
		const amount = (stored === undefined ? Decimal.ZERO : Decimal.from(stored)).add(
			signed(deltas.get(key) as Decimal),
		);
		return [...(JSON.parse(key) as string[]), amount.toString()];
	});
	if (known !== undefined) {
		for (const [i, row] of rows.entries()) known.set(keys[i] as string, row[4] as string);
	}
	if (rows.length === 1) sql.exec(UPSERT_AMOUNTS[table].one, ...(rows[0] as string[]));
	else sql.exec(UPSERT_AMOUNTS[table].many, JSON.stringify(rows));
}

/** The stored sums of day rows, by their keys [day, agent key, kind, type, field], as [position, sum]. */
export function readDailySums(
	sql: SqlStorage,
	table: DailyTable,
	keys: readonly string[][],
): [number, string][] {
	return sql
		.exec<{ i: number; sum: string }>(
			`SELECT k.key AS i, d.sum FROM json_each(?) AS k
			JOIN ${table} AS d ON d.day = k.value ->> 0 AND d.agent_key = k.value ->> 1 AND d.kind = k.value ->> 2
				AND d.type = k.value ->> 3 AND d.field = k.value ->> 4`,
			JSON.stringify(keys),
		)
		.toArray()
		.map((row): [number, string] => [row.i, row.sum]);
}

/** Rows [day, agent key, kind, type, field, count added, new sum]: the count is added, the sum replaced. */
export function writeDailyRows(
	sql: SqlStorage,
	table: DailyTable,
	rows: readonly (string | number)[][],
): void {
	if (rows.length <= FEW_ROWS) {
		sql.exec(UPSERT_DAILY_ROWS[table][rows.length] as string, ...rows.flat());
		return;
	}
	sql.exec(
		`INSERT INTO ${table} (day, agent_key, kind, type, field, count, sum, version)
		SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5, r.value ->> 6, 1
		FROM json_each(?) AS r WHERE true
		ON CONFLICT (day, agent_key, kind, type, field)
		DO UPDATE SET count = count + excluded.count, sum = excluded.sum, version = version + 1`,
		JSON.stringify(rows),
	);
}

/** The stored unpriced rows, by their keys as JSON [period, provider or "", model]. */
export function readUnpriced(sql: SqlStorage, keys: readonly string[]): Map<string, UnpricedRow> {
	return new Map(
		sql
			.exec<UnpricedRow & { i: number }>(
				`SELECT k.key AS i, u.* FROM json_each(?) AS k
				JOIN unpriced AS u ON u.period = k.value ->> 0 AND u.provider = k.value ->> 1 AND u.model = k.value ->> 2`,
				`[${keys.join(",")}]`,
			)
			.toArray()
			.map((row) => [keys[row.i] as string, row]),
	);
}

/** Rows [period, provider, model, events, four token sums], absolute values. */
export function writeUnpriced(sql: SqlStorage, rows: readonly (string | number)[][]): void {
	sql.exec(
		`INSERT INTO unpriced (period, provider, model, events, input_tokens, output_tokens, cached_input_tokens,
			reasoning_tokens, version)
		SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5,
			r.value ->> 6, r.value ->> 7, 1
		FROM json_each(?) AS r WHERE true
		ON CONFLICT (period, provider, model)
		DO UPDATE SET events = excluded.events, input_tokens = excluded.input_tokens,
			output_tokens = excluded.output_tokens, cached_input_tokens = excluded.cached_input_tokens,
			reasoning_tokens = excluded.reasoning_tokens, version = version + 1`,
		JSON.stringify(rows),
	);
}

/**
 * Usage between two UTC days (inclusive), added up per kind, type and field, of all instances or one: billable
 * usage only unless `tables` names daily_unbilled too.
 */
export function readUsage(
	sql: SqlStorage,
	startDay: string,
	endDay: string,
	agentKey?: string,
	tables: readonly DailyTable[] = ["daily"],
): UsageAggregate[] {
	// A split day's later rows are keyed by the split's instant (lib/day-keys.ts): they sort after the day itself.
	const filter = `day >= ?1 AND day <= ?2 || '~' ${agentKey === undefined ? "" : "AND agent_key = ?3"}`;
	const rows = sql
		.exec<DailyRow>(
			tables
				.map((table) => `SELECT kind, type, field, count, sum FROM ${table} WHERE ${filter}`)
				.join(" UNION ALL "),
			startDay,
			endDay,
			...(agentKey === undefined ? [] : [agentKey]),
		)
		.toArray();
	const totals = new Map<string, UsageAggregate & { total: Decimal }>();
	for (const row of rows) {
		const key = JSON.stringify([row.kind, row.type, row.field]);
		const entry = totals.get(key) ?? { ...row, count: 0, total: Decimal.ZERO };
		entry.count += row.count;
		entry.total = entry.total.add(Decimal.from(row.sum));
		totals.set(key, entry);
	}
	// Rows whose events all moved to another accumulator (adoption.ts) are left at count 0: nothing to report.
	return [...totals.values()]
		.filter((entry) => entry.count !== 0)
		.map(({ kind, type, field, count, total }) => ({
			kind,
			type,
			field,
			count,
			sum: total.toString(),
		}));
}
