import { eq, gte, lte, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { instanceOfRow } from "../agents/instances";
import { created } from "../audit/record";
import { writeAudited } from "../audit/write";
import { planInEffect } from "../billing-period/plan-in-effect";
import type { Db } from "../db/client";
import type { InScope } from "../db/rows";
import {
	accounts,
	agentInstances,
	agents,
	costRecords,
	subscriptions,
	usageCosts,
	usageModelCosts,
	usageUnpriced,
} from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { Decimal } from "../lib/decimal";
import { notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { sha256Hex } from "../lib/sha256";
import { nowIso } from "../lib/time";

export interface CostRecord {
	id: string;
	agent_id: string | null;
	customer_id: string | null;
	/** The plan in effect for the period of the subscription the events came from; null for manual records. */
	rate_plan_id: string | null;
	cost_type: string;
	/** The model of LLM calls priced from the model prices; null for other records. */
	model: string | null;
	amount: Decimal;
	currency: string;
	period: string;
	source: "events" | "manual" | "model_prices";
	created_at: string;
}

/** The cost type of LLM calls priced from the model prices. */
export const LLM_TOKENS_COST_TYPE = "llm_tokens";

export interface CostFilter {
	agentId?: string;
	customerId?: string;
	model?: string;
	currency: string;
	periods: { first: string; last: string };
}

export function costRecordJson(record: CostRecord) {
	const { created_at: _, rate_plan_id: _plan, amount, ...rest } = record;
	return { ...rest, amount: amount.toNumber() };
}

export async function createManualCost({
	db,
	scope,
	input,
}: InScope & {
	input: {
		agent_id: string;
		cost_type: string;
		amount: number;
		currency?: string;
		period: string;
		customer_id?: string;
	};
}): Promise<CostRecord> {
	const [agentRows, accountRows] = await db.batch([
		db
			.select({ id: agents.id })
			.from(agents)
			.where(inScope(scope, agents, eq(agents.id, input.agent_id))),
		db
			.select({ id: accounts.id })
			.from(accounts)
			.where(inScope(scope, accounts, eq(accounts.id, input.customer_id ?? ""))),
	]);
	if (agentRows.length === 0) throw notFound("agent", input.agent_id);
	if (input.customer_id !== undefined && accountRows.length === 0)
		throw notFound("account", input.customer_id);
	const record: CostRecord = {
		id: newId("cost"),
		agent_id: input.agent_id,
		customer_id: input.customer_id ?? null,
		rate_plan_id: null,
		cost_type: input.cost_type,
		model: null,
		amount: Decimal.from(input.amount),
		currency: input.currency ?? "USD",
		period: input.period,
		source: "manual",
		created_at: nowIso(),
	};
	const insert = db.insert(costRecords).values({
		id: record.id,
		environment: scope.environment,
		agentId: record.agent_id,
		customerId: record.customer_id,
		costType: record.cost_type,
		amount: record.amount.toString(),
		currency: record.currency,
		period: record.period,
		createdAt: record.created_at,
	});
	await writeAudited(db, scope, [insert], {
		action: "cost.created",
		resourceId: record.id,
		changes: created({
			agent_id: record.agent_id,
			customer_id: record.customer_id,
			cost_type: record.cost_type,
			amount: Decimal.from(record.amount).toNumber(),
			currency: record.currency,
			period: record.period,
		}),
	});
	return record;
}

/**
 * Cost records of the periods in the filter: manual ones as stored, and those carried by events, which the
 * accumulators roll up per instance; here they are added up per (agent, customer, cost type, month, currency).
 * Both reads are bounded by rollups, never by the number of events.
 */
export async function findCostRecords(db: Db, scope: Scope, filter: CostFilter): Promise<CostRecord[]> {
	// Manual records and rolled-up event costs are filtered alike: currency, and periods in the span.
	const matching = (
		table: typeof costRecords | typeof usageCosts | typeof usageModelCosts,
		...more: (SQL | undefined)[]
	) =>
		inScope(
			scope,
			table,
			eq(table.currency, filter.currency),
			gte(table.period, filter.periods.first),
			lte(table.period, filter.periods.last),
			...more,
		);
	const [manual, fromEvents, fromModels] = await db.batch([
		db.select().from(costRecords).where(matching(costRecords)),
		rollupRows(db, usageCosts, { costType: usageCosts.costType }, matching(usageCosts)),
		rollupRows(
			db,
			usageModelCosts,
			{ model: usageModelCosts.model },
			matching(
				usageModelCosts,
				filter.model === undefined ? undefined : eq(usageModelCosts.model, filter.model),
			),
		),
	]);

	// A record adds up rollup rows; its id is the earliest of theirs, so it stays put as more rows join it.
	const groups = new Map<string, Omit<CostRecord, "id"> & { id: string | null }>();
	const rows = [
		...fromEvents.map((row) => ({ ...row, model: null, source: "events" as const })),
		...fromModels.map((row) => ({
			...row,
			costType: LLM_TOKENS_COST_TYPE,
			source: "model_prices" as const,
		})),
	];
	for (const row of rows) {
		const groupKey = JSON.stringify([
			row.agentId,
			row.customerId,
			row.costType,
			row.period,
			row.ratePlanId,
			...(row.model === null ? [] : [row.model]),
		]);
		const group = groups.get(groupKey);
		if (group) {
			group.amount = group.amount.add(Decimal.from(row.amount));
			if (row.id !== null && (group.id === null || row.id < group.id)) group.id = row.id;
		} else {
			groups.set(groupKey, {
				id: row.id,
				agent_id: row.agentId,
				customer_id: row.customerId,
				rate_plan_id: row.ratePlanId ?? null,
				cost_type: row.costType,
				model: row.model,
				amount: Decimal.from(row.amount),
				currency: filter.currency,
				period: row.period,
				source: row.source,
				created_at: `${row.period}-01T00:00:00.000Z`,
			});
		}
	}
	// A model's costs re-rated to nothing (its price deleted, say) are no record.
	const derived = [...groups]
		.filter(([, record]) => record.source !== "model_prices" || !record.amount.isZero())
		.map(([groupKey, record]) => ({
			...record,
			id: record.id ?? derivedCostId(scope, filter.currency, groupKey),
		}));
	const records: CostRecord[] = [
		...derived,
		...manual.map((row) => ({
			id: row.id,
			agent_id: row.agentId,
			customer_id: row.customerId,
			rate_plan_id: null,
			cost_type: row.costType,
			model: null,
			amount: Decimal.from(row.amount),
			currency: row.currency,
			period: row.period,
			source: "manual" as const,
			created_at: row.createdAt,
		})),
	];
	return records
		.filter((r) => filter.agentId === undefined || r.agent_id === filter.agentId)
		.filter((r) => filter.customerId === undefined || r.customer_id === filter.customerId)
		.filter((r) => filter.model === undefined || r.model === filter.model)
		.sort(
			(a, b) =>
				b.period.localeCompare(a.period) ||
				b.created_at.localeCompare(a.created_at) ||
				b.id.localeCompare(a.id),
		);
}

/**
 * The accumulators' cost rollups of one table (per cost type, or per model) with the agent and customer of each
 * row, and the plan that rated the subscription's period (the plan history's row), so margins per product can set
 * these costs against that plan's revenue.
 */
function rollupRows<
	T extends typeof usageCosts | typeof usageModelCosts,
	K extends Record<string, SQLiteColumn>,
>(db: Db, table: T, key: K, where: SQL) {
	return db
		.select({
			agentId: agentInstances.agentId,
			customerId: subscriptions.accountId,
			ratePlanId: sql<string | null>`${planInEffect(table.period, table.subscriptionId)}`,
			...key,
			period: table.period,
			amount: table.amount,
			id: table.id,
		})
		.from(table)
		.leftJoin(agentInstances, instanceOfRow(table))
		.leftJoin(subscriptions, eq(subscriptions.id, table.subscriptionId))
		.where(where);
}

/** Only for rollups not flushed since migration 0004, which have no id yet: a digest of what they add up. */
function derivedCostId(scope: Scope, currency: string, groupKey: string): string {
	const digest = sha256Hex(`${scope.environment}|${currency}|${groupKey}`);
	return `cost_${digest.slice(0, 26)}`;
}

/**
 * The LLM calls of a billing period that no model price covers, per (provider, model), added up over the
 * accumulators; a model whose calls were all moved elsewhere (count 0) is left out.
 */
export async function findUnpriced(db: Db, scope: Scope, period: string) {
	const rows = await db
		.select()
		.from(usageUnpriced)
		.where(inScope(scope, usageUnpriced, eq(usageUnpriced.period, period)));
	const totals = new Map<
		string,
		{ provider: string; model: string; events: number; tokens: [Decimal, Decimal, Decimal, Decimal] }
	>();
	for (const row of rows) {
		const key = JSON.stringify([row.provider, row.model]);
		let total = totals.get(key);
		if (total === undefined) {
			total = {
				provider: row.provider,
				model: row.model,
				events: 0,
				tokens: [Decimal.ZERO, Decimal.ZERO, Decimal.ZERO, Decimal.ZERO],
			};
			totals.set(key, total);
		}
		total.events += row.events;
		total.tokens = [
			total.tokens[0].add(Decimal.from(row.inputTokens)),
			total.tokens[1].add(Decimal.from(row.outputTokens)),
			total.tokens[2].add(Decimal.from(row.cachedInputTokens)),
			total.tokens[3].add(Decimal.from(row.reasoningTokens)),
		];
	}
	return [...totals.values()]
		.filter((total) => total.events > 0)
		.sort((a, b) => a.provider.localeCompare(b.provider) || a.model.localeCompare(b.model))
		.map(({ provider, model, events, tokens }) => ({
			provider: provider === "" ? null : provider,
			model,
			events,
			input_tokens: tokens[0].toNumber(),
			output_tokens: tokens[1].toNumber(),
			cached_input_tokens: tokens[2].toNumber(),
			reasoning_tokens: tokens[3].toNumber(),
		}));
}
