import type { z } from "@hono/zod-openapi";
import { and, desc, eq, inArray, type SQL, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { changed, created } from "../audit/record";
import { writeAudited } from "../audit/write";
import { abortUnlessChanged, isAbortedByGuard } from "../db/batch";
import type { Db } from "../db/client";
import type { InScope, Page } from "../db/rows";
import { agentInstances } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { conflict } from "../lib/errors";
import { nowIso } from "../lib/time";
import { getAgent } from "./agents";
import type { Instance } from "./schemas";

export { INSTANCE_KEY } from "./instance-key";

/** The join from rows keyed by agent key (usage, costs) to their instance, and so to its agent. */
export function instanceOfRow(table: { environment: SQLiteColumn; agentKey: SQLiteColumn }): SQL {
	return and(
		eq(agentInstances.environment, table.environment),
		eq(agentInstances.key, table.agentKey),
	) as SQL;
}

export type InstanceView = z.infer<typeof Instance>;

function toView(row: typeof agentInstances.$inferSelect): InstanceView {
	return { key: row.key, agent_id: row.agentId, name: row.name, created_at: row.createdAt };
}

/** Registers `key` under the agent: 201 when new, 200 when it was unassigned or already this agent's. */
export async function registerInstance({
	db,
	scope,
	agentId,
	input,
}: InScope & {
	agentId: string;
	input: { key: string; name?: string };
}): Promise<{ instance: InstanceView; created: boolean }> {
	await getAgent({ db, scope, id: agentId });
	const now = nowIso();
	const fresh = {
		environment: scope.environment,
		key: input.key,
		agentId,
		name: input.name ?? null,
		createdAt: now,
	};
	try {
		await writeAudited(
			db,
			scope,
			[db.insert(agentInstances).values(fresh).onConflictDoNothing(), abortUnlessChanged(db.$client)],
			{
				action: "agent_instance.created",
				resourceId: input.key,
				changes: created({ agent_id: agentId, name: fresh.name }),
			},
		);
		return { instance: toView(fresh), created: true };
	} catch (error) {
		if (!isAbortedByGuard(error)) throw error;
	}

	// The key exists: claim it if unassigned or already this agent's.
	const mine = sql`(${agentInstances.agentId} IS NULL OR ${agentInstances.agentId} = ${agentId})`;
	const where = inScope(scope, agentInstances, eq(agentInstances.key, input.key), mine);
	const [before] = await db.select().from(agentInstances).where(where);
	if (!before) throw conflict(`Instance '${input.key}' is already assigned to another agent.`);
	const set = { agentId, ...(input.name !== undefined ? { name: input.name } : {}) };
	const changes = changed(
		{ agent_id: before.agentId, name: before.name },
		{ agent_id: agentId, name: input.name },
	);
	// Already this agent's, as asked: nothing to change, nothing to record.
	if (Object.keys(changes).length === 0) return { instance: toView(before), created: false };
	try {
		await writeAudited(
			db,
			scope,
			[db.update(agentInstances).set(set).where(where), abortUnlessChanged(db.$client)],
			{
				action: "agent_instance.updated",
				resourceId: input.key,
				changes,
			},
		);
	} catch (error) {
		if (isAbortedByGuard(error))
			throw conflict(`Instance '${input.key}' is already assigned to another agent.`);
		throw error;
	}
	return { instance: toView({ ...before, ...set }), created: false };
}

export async function listInstances({
	db,
	scope,
	agentId,
	limit,
	offset,
}: InScope &
	Page & {
		agentId: string;
	}) {
	await getAgent({ db, scope, id: agentId });
	const where = inScope(scope, agentInstances, eq(agentInstances.agentId, agentId));
	const [rows, [count]] = await db.batch([
		db
			.select()
			.from(agentInstances)
			.where(where)
			.orderBy(desc(agentInstances.createdAt), desc(agentInstances.key))
			.limit(limit)
			.offset(offset),
		db.select({ n: sql<number>`count(*)` }).from(agentInstances).where(where),
	]);
	return { items: rows.map(toView), total: count?.n ?? 0 };
}

/**
 * Registers keys named by events or subscriptions before anyone registered them: unassigned, or assigned to
 * the agent whose id equals the key. One statement for all keys; existing instances are left as they are.
 */
export function ensureInstancesStatement(db: Db, scope: Scope, keys: string[]) {
	return db.run(sql`
		INSERT INTO agent_instances (environment, key, agent_id, name, created_at)
		SELECT ${scope.environment}, k.value,
			(SELECT id FROM agents WHERE id = k.value AND environment = ${scope.environment}), NULL, ${nowIso()}
		FROM json_each(${JSON.stringify(keys)}) AS k
		WHERE true
		ON CONFLICT DO NOTHING`);
}

export async function instancesByKey(db: Db, scope: Scope, keys: string[]) {
	if (keys.length === 0) return new Map<string, InstanceView>();
	const rows = await db
		.select()
		.from(agentInstances)
		.where(and(inScope(scope, agentInstances), inArray(agentInstances.key, keys)));
	return new Map(rows.map((r) => [r.key, toView(r)]));
}
