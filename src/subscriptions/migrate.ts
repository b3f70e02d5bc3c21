/**
 * POST /v1/pricing/rate-plans/{id}/migrate (docs/plan-versions.md#migrating-subscriptions): a change-plan, at the
 * end of the period, of every active subscription on the plan's earlier versions to a target version. One whose
 * pending change is already that target, or goes to another plan, is left alone, so a second run migrates 0.
 * Each move is the guarded write of change.ts: two runs at once never move a subscription twice.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client";
import { ratePlanVersions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Env } from "../env";
import { DomainError, notFound } from "../lib/errors";
import { nowIso, periodOf } from "../lib/time";
import { moveToPlan, type PlanRef, pendingOf, samePlan } from "./change";
import type { PlanMoveArgs } from "./change-plan";
import { ratePlanQuery } from "./subscribable";
import { loadSubscription } from "./views";

export interface MigrateInput {
	from_version?: number;
	to_version?: number;
	at?: "period_end";
}

const IN_PARALLEL = 5;

/** Active subscriptions whose current period is rated by one of these versions of the plan. */
async function subscriptionsOn(db: Db, scope: Scope, id: string, versions: number[]): Promise<string[]> {
	const period = periodOf(nowIso());
	const rows = await db.all<{ id: string }>(sql`
		SELECT s.id FROM subscription_plans AS sp
		JOIN subscriptions AS s ON s.id = sp.subscription_id AND s.environment = ${scope.environment}
			AND s.status = 'active'
		WHERE sp.rate_plan_id = ${id}
			AND sp.rate_plan_version IN (SELECT value FROM json_each(${JSON.stringify(versions)}))
			AND sp.effective_period = (SELECT max(x.effective_period) FROM subscription_plans AS x
				WHERE x.subscription_id = sp.subscription_id AND x.effective_period <= ${period})
		ORDER BY s.created_at, s.id`);
	return rows.map((row) => row.id);
}

/** Moves one subscription unless it needs no move; answers whether it moved. */
async function migrateOne(env: Env, db: Db, scope: Scope, id: string, target: PlanRef): Promise<boolean> {
	const { view } = await loadSubscription(db, scope, id);
	const pending = pendingOf(view);
	if (samePlan(pending, target) || (pending !== null && pending.id !== target.id)) return false;
	if (view.cancel_at !== null) return false; // no next period to move
	try {
		await moveToPlan({ env, db, scope, id }, target);
		return true;
	} catch (error) {
		// Changed meanwhile (cancelled, or moved by a concurrent run): not this run's to move.
		if (error instanceof DomainError && error.code === "conflict") return false;
		throw error;
	}
}

export async function migratePlan({
	env,
	db,
	scope,
	id,
	input,
}: PlanMoveArgs<MigrateInput>): Promise<{ migrated: number; subscription_ids: string[] }> {
	const [[plan], versions] = await db.batch([
		ratePlanQuery(db, scope, id),
		db
			.select({ version: ratePlanVersions.version })
			.from(ratePlanVersions)
			.where(inScope(scope, ratePlanVersions, and(eq(ratePlanVersions.ratePlanId, id)))),
	]);
	if (!plan) throw notFound("rate plan", id);
	const known = new Set(versions.map((v) => v.version));
	const to = input.to_version ?? plan.version;
	for (const wanted of [input.from_version, to]) {
		if (wanted !== undefined && !known.has(wanted)) throw notFound("rate plan version", `${id} v${wanted}`);
	}
	const from = input.from_version !== undefined ? [input.from_version] : [...known].filter((v) => v < to);
	const candidates = from.includes(to) ? [] : await subscriptionsOn(db, scope, id, from);
	const target = { id, version: to };
	const moved: string[] = [];
	for (let i = 0; i < candidates.length; i += IN_PARALLEL) {
		const batch = candidates.slice(i, i + IN_PARALLEL);
		const results = await Promise.all(batch.map((sub) => migrateOne(env, db, scope, sub, target)));
		moved.push(...batch.filter((_, n) => results[n]));
	}
	return { migrated: moved.length, subscription_ids: moved };
}
