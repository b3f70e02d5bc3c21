/**
 * The accumulator's running aggregates, with the meaning of D1's usage_daily and usage_costs:
 * - daily, per UTC day of the event's timestamp, instance, kind and type: field "" is the events themselves
 *   (count; sum of outcome values, "0" for actions); any other field is a numeric metadata key of actions (count of
 *   events carrying it, exact sum of its values), so a plan charge can sum any of them;
 * - costs, from metadata.cost of actions, per month, instance, cost type (default: the action_type) and currency
 *   (default USD);
 * - model_costs, the cost of LLM calls priced from the model prices (model-costs/event-cost.ts), per month,
 *   instance, model and the price's currency (their cost type is "llm_tokens");
 * - unpriced, the LLM calls no price covers, per month, provider ("" when the event names none) and model: how
 *   many, and their token sums, so nothing is silently left uncosted.
 * Sums are exact decimal strings. `version` counts changes of a row, so a flush can tell whether it changed
 * while D1 was being written.
 *
 * A subscription's accumulator keeps the events that reached it with a timestamp before the subscription started
 * (docs/billing.md#subscription-lifecycle: not billable) apart, in `daily_unbilled`, with the same columns: they reach D1 without a subscription.
 */
import { Decimal } from "../../lib/decimal";
import { dayOf, periodOf } from "../../lib/time";
import { type EventCost, TOKEN_FIELDS } from "../../model-costs/event-cost";
import type { UsageAggregate } from "../../pricing/quantities";
import type { ModelPriceCache } from "./prices";
import type { MeteringEvent } from "./types";

const DEFAULT_COST_CURRENCY = "USD";

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

type UnpricedDelta = { events: number; tokens: [Decimal, Decimal, Decimal, Decimal] };

// `whole` gathers safe integers as a plain number while their sum stays exact (the common case of counters,
// where Decimal arithmetic per event costs more than the rest of counting it); `sum` gathers all other values.
type DailyDelta = { key: string[]; count: number; sum: Decimal; whole: number };

type Group = { day: string; agentKey: string; kind: string; type: string; fields: Map<string, DailyDelta> };

// Separates the parts of a row's key in the maps: days, agent keys, kinds and types never contain it.
export const SEPARATOR = "\u0000";

/** The exact value of a JSON number; integers skip the decimal parser, the common case of counters. */
function exactly(value: number): Decimal {
	return Number.isSafeInteger(value) ? Decimal.from(BigInt(value)) : Decimal.from(value);
}

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
 * The stored value of rows this object wrote, by the row's key parts joined by SEPARATOR: the sums of daily rows
 * (by day, agent key, kind, type and field) or the quantities of metrics (metrics.ts), as this object last wrote
 * them. The accumulator is the only writer of its rows, so what it wrote is what is stored, as long as the
 * transaction that wrote it committed. Its owner (store.ts) clears it whenever a transaction fails; its size is
 * bounded.
 */
export class StoredValues {
	private readonly values = new Map<string, string>();

	constructor(private readonly maxRows = 10_000) {}

	has(id: string): boolean {
		return this.values.has(id);
	}

	get(id: string): string | undefined {
		return this.values.get(id);
	}

	set(id: string, value: string): void {
		if (!this.values.has(id) && this.values.size >= this.maxRows) this.clear();
		this.values.set(id, value);
	}

	clear(): void {
		this.values.clear();
	}
}

/**
 * The stored value of each row (undefined: not stored), by its id: from `known` where it has it, the others by
 * one call of `read`, given their indices, which answers the rows it found as [position in its argument, value].
 * Every value is looked up before the caller notes a new one: noting may clear `known` when it is full.
 */
export function storedBefore(
	ids: readonly string[],
	known: StoredValues | undefined,
	read: (unknown: number[]) => Iterable<[position: number, value: string]>,
): (string | undefined)[] {
	const unknown = ids.flatMap((id, i) => (known?.has(id) ? [] : [i]));
	const found = new Map<number, string>();
	if (unknown.length > 0) {
		for (const [position, value] of read(unknown)) found.set(unknown[position] as number, value);
	}
	return ids.map((id, i) => known?.get(id) ?? found.get(i));
}

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
function applyAmounts(
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

/**
 * What a batch of events adds to the day rows of `table` and to the costs, gathered in memory so each aggregate
 * row is written once per batch. With `sign` -1 it is what they take away (events moved to another accumulator,
 * see adoption.ts).
 */
export class AggregateDeltas {
	/** `prices` costs the LLM calls without an explicit metadata cost (recorded like those, billable or not). */
	constructor(
		private readonly table: DailyTable = "daily",
		private readonly sign: 1 | -1 = 1,
		private readonly prices?: ModelPriceCache,
	) {}

	// By day, agent key, kind and type, then by field.
	private readonly daily = new Map<string, Group>();
	private readonly costs = new Map<string, Decimal>();
	// By JSON [period, agent key, model, currency].
	private readonly modelCosts = new Map<string, Decimal>();
	// By JSON [period, provider or "", model].
	private readonly unpriced = new Map<string, UnpricedDelta>();
	// The events of a batch mostly share day, instance, kind and type: the last one's group is at hand.
	private last: Group | undefined;

	count(event: MeteringEvent): void {
		const day = dayOf(event.timestamp);
		const fields = this.groupOf(day, event).fields;
		const own = event.kind === "outcome" ? Decimal.from(event.value ?? "0") : Decimal.ZERO;
		const delta = fields.get("");
		if (delta === undefined) fields.set("", newDelta(day, event, "", own, 0));
		else {
			delta.count++;
			if (!own.isZero()) delta.sum = delta.sum.add(own);
		}
		if (event.kind !== "action" || event.metadata === null) return;
		for (const field in event.metadata) {
			const value = event.metadata[field];
			if (typeof value === "number") addValue(fields, day, event, field, value);
		}
		const { cost, cost_type: costType, cost_currency: currency } = event.metadata;
		if (typeof cost !== "number") {
			if (this.prices !== undefined && typeof event.metadata.model === "string") this.countModelCost(event);
			return;
		}
		const key = JSON.stringify([
			periodOf(event.timestamp),
			event.agentKey,
			typeof costType === "string" ? costType : event.type,
			typeof currency === "string" ? currency : DEFAULT_COST_CURRENCY,
		]);
		this.costs.set(key, (this.costs.get(key) ?? Decimal.ZERO).add(exactly(cost)));
	}

	/** An LLM call without an explicit cost: at its model's price, or tallied as unpriced. */
	private countModelCost(event: MeteringEvent): void {
		const cost = (this.prices as ModelPriceCache).costOf(event);
		if (cost !== null) this.addModelCost(event, cost);
	}

	/** Adds (or, with sign -1, takes away) an LLM call's cost from the model prices; explicit costs are ignored. */
	addModelCost(event: MeteringEvent, cost: EventCost): void {
		const period = periodOf(event.timestamp);
		if (cost.kind === "priced") {
			const key = JSON.stringify([period, event.agentKey, cost.model, cost.currency]);
			this.modelCosts.set(key, (this.modelCosts.get(key) ?? Decimal.ZERO).add(cost.amount));
		} else if (cost.kind === "unpriced") {
			const { provider, model, tokens } = cost.usage;
			const key = JSON.stringify([period, provider ?? "", model]);
			let delta = this.unpriced.get(key);
			if (delta === undefined) {
				delta = { events: 0, tokens: [Decimal.ZERO, Decimal.ZERO, Decimal.ZERO, Decimal.ZERO] };
				this.unpriced.set(key, delta);
			}
			delta.events++;
			for (const [i, field] of TOKEN_FIELDS.entries()) {
				const value = tokens[field];
				if (value !== undefined && value !== 0)
					delta.tokens[i] = (delta.tokens[i] as Decimal).add(exactly(value));
			}
		}
	}

	private groupOf(day: string, event: MeteringEvent): Group {
		const last = this.last;
		if (
			last !== undefined &&
			last.day === day &&
			last.agentKey === event.agentKey &&
			last.kind === event.kind &&
			last.type === event.type
		) {
			return last;
		}
		const id = `${day}${SEPARATOR}${event.agentKey}${SEPARATOR}${event.kind}${SEPARATOR}${event.type}`;
		let group = this.daily.get(id);
		if (group === undefined) {
			group = { day, agentKey: event.agentKey, kind: event.kind, type: event.type, fields: new Map() };
			this.daily.set(id, group);
		}
		this.last = group;
		return group;
	}

	/**
	 * Adds the deltas to the stored rows; call inside the transaction that stored the events. Sums are added
	 * here, exactly. `known` holds what this object wrote before (KnownSums): rows found there need no read, so a
	 * warm call is one write per table; the others are read in one statement.
	 */
	applyTo(sql: SqlStorage, known?: KnownSums): void {
		const table = this.table;
		const signed = (value: Decimal) => (this.sign === 1 ? value : value.negate());
		if (this.daily.size > 0) {
			const deltas = [...this.daily.values()].flatMap((group) => [...group.fields.values()]);
			const ids = deltas.map((delta) => delta.key.join(SEPARATOR));
			const before = storedBefore(ids, known?.daily, (unknown) =>
				sql
					.exec<{ i: number; sum: string }>(
						`SELECT k.key AS i, d.sum FROM json_each(?) AS k
						JOIN ${table} AS d ON d.day = k.value ->> 0 AND d.agent_key = k.value ->> 1 AND d.kind = k.value ->> 2
							AND d.type = k.value ->> 3 AND d.field = k.value ->> 4`,
						JSON.stringify(unknown.map((i) => (deltas[i] as DailyDelta).key)),
					)
					.toArray()
					.map((row): [number, string] => [row.i, row.sum]),
			);
			const rows = deltas.map((delta, i) => {
				const added = signed(
					delta.whole === 0 ? delta.sum : delta.sum.add(Decimal.from(BigInt(delta.whole))),
				);
				const stored = before[i];
				return [
					...delta.key,
					this.sign * delta.count,
					(stored === undefined ? added : Decimal.from(stored).add(added)).toString(),
				];
			});
			if (known !== undefined) {
				for (const [i, row] of rows.entries()) known.daily.set(ids[i] as string, row[6] as string);
			}
			if (rows.length <= FEW_ROWS) {
				sql.exec(UPSERT_DAILY_ROWS[table][rows.length] as string, ...rows.flat());
			} else {
				sql.exec(
					`INSERT INTO ${table} (day, agent_key, kind, type, field, count, sum, version)
					SELECT r.value ->> 0, r.value ->> 1, r.value ->> 2, r.value ->> 3, r.value ->> 4, r.value ->> 5, r.value ->> 6, 1
					FROM json_each(?) AS r WHERE true
					ON CONFLICT (day, agent_key, kind, type, field)
					DO UPDATE SET count = count + excluded.count, sum = excluded.sum, version = version + 1`,
					JSON.stringify(rows),
				);
			}
		}
		applyAmounts(sql, "costs", this.costs, signed, known?.costs);
		applyAmounts(sql, "model_costs", this.modelCosts, signed, known?.modelCosts);
		if (this.unpriced.size > 0) {
			const keys = [...this.unpriced.keys()];
			const current = new Map(
				sql
					.exec<UnpricedRow & { i: number }>(
						`SELECT k.key AS i, u.* FROM json_each(?) AS k
						JOIN unpriced AS u ON u.period = k.value ->> 0 AND u.provider = k.value ->> 1 AND u.model = k.value ->> 2`,
						`[${keys.join(",")}]`,
					)
					.toArray()
					.map((row) => [keys[row.i] as string, row]),
			);
			const rows = [...this.unpriced].map(([key, delta]) => {
				const before = current.get(key);
				const sum = (i: number) => {
					const field = TOKEN_FIELDS[i] as (typeof TOKEN_FIELDS)[number];
					const was = before === undefined ? Decimal.ZERO : Decimal.from(before[field]);
					return was.add(signed(delta.tokens[i] as Decimal)).toString();
				};
				return [
					...(JSON.parse(key) as string[]),
					(before?.events ?? 0) + this.sign * delta.events,
					sum(0),
					sum(1),
					sum(2),
					sum(3),
				];
			});
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
	}
}

function newDelta(day: string, event: MeteringEvent, field: string, sum: Decimal, whole: number): DailyDelta {
	return { key: [day, event.agentKey, event.kind, event.type, field], count: 1, sum, whole };
}

function addValue(
	fields: Map<string, DailyDelta>,
	day: string,
	event: MeteringEvent,
	field: string,
	value: number,
): void {
	const safe = Number.isSafeInteger(value);
	const delta = fields.get(field);
	if (delta === undefined) {
		fields.set(
			field,
			safe
				? newDelta(day, event, field, Decimal.ZERO, value)
				: newDelta(day, event, field, exactly(value), 0),
		);
		return;
	}
	delta.count++;
	const whole = delta.whole + value;
	// Past the safe integers a sum of numbers is no longer exact: such a value goes to the decimal.
	if (safe && Number.isSafeInteger(whole)) delta.whole = whole;
	else delta.sum = delta.sum.add(exactly(value));
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
	const filter = `day >= ?1 AND day <= ?2 ${agentKey === undefined ? "" : "AND agent_key = ?3"}`;
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
