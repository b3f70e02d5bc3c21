/**
 * The accumulator's running aggregates, with the meaning of D1's usage_daily and usage_costs:
 * - daily, per UTC day of the event's timestamp, instance, kind and type: field "" is the events themselves
 *   (count; sum of outcome values, "0" for actions); any other field is a numeric metadata key of actions (count of
 *   events carrying it, exact sum of its values), so a plan charge can sum any of them;
 * - costs, from metadata.cost of actions, per month, instance, cost type (default: the action_type) and currency
 *   (default USD).
 * Sums are exact decimal strings. `version` counts changes of a row, so a flush can tell whether it changed
 * while D1 was being written.
 */
import { Decimal } from "../../lib/decimal";
import { dayOf, periodOf } from "../../lib/time";
import type { UsageAggregate } from "../../pricing/quantities";
import type { StoredEvent } from "./types";

const DEFAULT_COST_CURRENCY = "USD";

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

type Totals = { count: number; sum: Decimal };

/** What a batch of events adds, gathered in memory so each aggregate row is written once per batch. */
export class AggregateDeltas {
	private readonly daily = new Map<string, Totals>();
	private readonly costs = new Map<string, Decimal>();

	count(event: StoredEvent): void {
		const base = [dayOf(event.timestamp), event.agentKey, event.kind, event.type];
		this.addDaily([...base, ""], event.kind === "outcome" ? Decimal.from(event.value ?? "0") : Decimal.ZERO);
		if (event.kind !== "action" || event.metadata === null) return;
		for (const [field, value] of Object.entries(event.metadata)) {
			if (typeof value === "number") this.addDaily([...base, field], Decimal.from(value));
		}
		const { cost, cost_type: costType, cost_currency: currency } = event.metadata;
		if (typeof cost !== "number") return;
		const key = JSON.stringify([
			periodOf(event.timestamp),
			event.agentKey,
			typeof costType === "string" ? costType : event.type,
			typeof currency === "string" ? currency : DEFAULT_COST_CURRENCY,
		]);
		this.costs.set(key, (this.costs.get(key) ?? Decimal.ZERO).add(Decimal.from(cost)));
	}

	private addDaily(key: string[], sum: Decimal): void {
		const id = JSON.stringify(key);
		const totals = this.daily.get(id) ?? { count: 0, sum: Decimal.ZERO };
		this.daily.set(id, { count: totals.count + 1, sum: totals.sum.add(sum) });
	}

	/** Adds the deltas to the stored rows; call inside the transaction that stored the events. */
	applyTo(sql: SqlStorage): void {
		for (const [key, delta] of this.daily) {
			const [day, agentKey, kind, type, field] = JSON.parse(key) as string[];
			const current = sql
				.exec<{ sum: string }>(
					"SELECT sum FROM daily WHERE day = ? AND agent_key = ? AND kind = ? AND type = ? AND field = ?",
					day,
					agentKey,
					kind,
					type,
					field,
				)
				.toArray()[0];
			sql.exec(
				`INSERT INTO daily (day, agent_key, kind, type, field, count, sum, version) VALUES (?, ?, ?, ?, ?, ?, ?, 1)
				ON CONFLICT (day, agent_key, kind, type, field)
				DO UPDATE SET count = count + excluded.count, sum = excluded.sum, version = version + 1`,
				day,
				agentKey,
				kind,
				type,
				field,
				delta.count,
				(current ? Decimal.from(current.sum) : Decimal.ZERO).add(delta.sum).toString(),
			);
		}
		for (const [key, delta] of this.costs) {
			const [period, agentKey, costType, currency] = JSON.parse(key) as string[];
			const current = sql
				.exec<{ amount: string }>(
					"SELECT amount FROM costs WHERE period = ? AND agent_key = ? AND cost_type = ? AND currency = ?",
					period,
					agentKey,
					costType,
					currency,
				)
				.toArray()[0];
			sql.exec(
				`INSERT INTO costs (period, agent_key, cost_type, currency, amount, version) VALUES (?, ?, ?, ?, ?, 1)
				ON CONFLICT (period, agent_key, cost_type, currency)
				DO UPDATE SET amount = excluded.amount, version = version + 1`,
				period,
				agentKey,
				costType,
				currency,
				(current ? Decimal.from(current.amount) : Decimal.ZERO).add(delta).toString(),
			);
		}
	}
}

/** Usage between two UTC days (inclusive), added up per kind, type and field, of all instances or one. */
export function readUsage(
	sql: SqlStorage,
	startDay: string,
	endDay: string,
	agentKey?: string,
): UsageAggregate[] {
	const rows = sql
		.exec<DailyRow>(
			`SELECT kind, type, field, count, sum FROM daily WHERE day >= ? AND day <= ?
			${agentKey === undefined ? "" : "AND agent_key = ?"}`,
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
	return [...totals.values()].map(({ kind, type, field, count, total }) => ({
		kind,
		type,
		field,
		count,
		sum: total.toString(),
	}));
}
