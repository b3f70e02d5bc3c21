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

import { dayKeyOf } from "../../../lib/day-keys";
import { Decimal } from "../../../lib/decimal";
import { dayOf, periodOf } from "../../../lib/time";
import { type EventCost, TOKEN_FIELDS } from "../../../model-costs/event-cost";
import {
	applyAmounts,
	type DailyTable,
	type KnownSums,
	readDailySums,
	readUnpriced,
	SEPARATOR,
	writeDailyRows,
	writeUnpriced,
} from "../storage/aggregate-rows";
import type { ModelPriceCache } from "../storage/prices";
import { storedBefore } from "../storage/stored-values";
import type { MeteringEvent } from "../types";

const DEFAULT_COST_CURRENCY = "USD";

type UnpricedDelta = { events: number; tokens: [Decimal, Decimal, Decimal, Decimal] };

// `whole` gathers safe integers as a plain number while their sum stays exact (the common case of counters,
// where Decimal arithmetic per event costs more than the rest of counting it); `sum` gathers all other values.
type DailyDelta = { key: string[]; count: number; sum: Decimal; whole: number };

type Group = { day: string; agentKey: string; kind: string; type: string; fields: Map<string, DailyDelta> };

/** The exact value of a JSON number; integers skip the decimal parser, the common case of counters. */
function exactly(value: number): Decimal {
	return Number.isSafeInteger(value) ? Decimal.from(BigInt(value)) : Decimal.from(value);
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
		/** The instants the subscription's periods split at, which key the rows of their days (lib/day-keys.ts). */
		private readonly splits: readonly string[] = [],
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
		this.countDay(
			event,
			this.splits.length === 0 ? dayOf(event.timestamp) : dayKeyOf(event.timestamp, this.splits),
		);
		if (event.kind !== "action" || event.metadata === null) return;
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

	/** What the event adds to the day row under `day` (a day key, lib/day-keys.ts): its count and field sums. */
	countDay(event: MeteringEvent, day: string): void {
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
				readDailySums(
					sql,
					table,
					unknown.map((i) => (deltas[i] as DailyDelta).key),
				),
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
			writeDailyRows(sql, table, rows);
		}
		applyAmounts(sql, "costs", this.costs, signed, known?.costs);
		applyAmounts(sql, "model_costs", this.modelCosts, signed, known?.modelCosts);
		if (this.unpriced.size > 0) {
			const keys = [...this.unpriced.keys()];
			const current = readUnpriced(sql, keys);
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
			writeUnpriced(sql, rows);
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
