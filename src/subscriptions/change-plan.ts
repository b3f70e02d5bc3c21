/**
 * POST /v1/subscriptions/{id}/change-plan (docs/plan-versions.md#changing-a-subscriptions-plan): a move to another
 * plan, or another version of its own, from the next billing period on. The checks of the contract come first —
 * unknown plan or version 404; another currency than the current plan's, a cancelled subscription, or the plan
 * and version it already has 409 — then the change is written as a PATCH of the plan writes it (change.ts): the
 * next period's plan-history row, pending_plan_change, subscription.updated and the audit record in one batch.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { ratePlanVersions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Env } from "../env";
import { conflict, notFound } from "../lib/errors";
import { assertActive, moveToPlan, type PlanRef, pendingOf, samePlan } from "./change";
import { ratePlanQuery } from "./subscribable";
import { loadSubscription, type SubscriptionView } from "./views";

export interface ChangePlanInput {
	rate_plan_id?: string;
	version?: number;
	at?: "now" | "period_end";
}

function versionQuery(db: Db, scope: Scope, id: string, version: number) {
	return db
		.select({ version: ratePlanVersions.version })
		.from(ratePlanVersions)
		.where(
			inScope(
				scope,
				ratePlanVersions,
				and(eq(ratePlanVersions.ratePlanId, id), eq(ratePlanVersions.version, version)),
			),
		);
}

/** The target of a change once checked: the plan exists at that version, in the current plan's currency. */
export async function changeTarget(
	db: Db,
	scope: Scope,
	view: SubscriptionView,
	input: ChangePlanInput,
): Promise<PlanRef> {
	const id = input.rate_plan_id ?? view.rate_plan_id;
	const [[plan], [current]] = await db.batch([
		ratePlanQuery(db, scope, id),
		ratePlanQuery(db, scope, view.rate_plan_id),
	]);
	if (!plan) throw notFound("rate plan", id);
	const version = input.version ?? plan.version;
	if (input.version !== undefined) {
		const [known] = await versionQuery(db, scope, id, version);
		if (!known) throw notFound("rate plan version", `${id} v${version}`);
	}
	if (current && plan.currency !== current.currency) {
		throw conflict(
			`Rate plan ${id} is priced in ${plan.currency}, but subscription ${view.id} is on a plan in ${current.currency}.`,
		);
	}
	return { id, version };
}

/** What a plan move (a change-plan, a migrate) is given: where, which subscription or plan, and the body. */
export interface PlanMoveArgs<Input> {
	env: Env;
	db: Db;
	scope: Scope;
	id: string;
	input: Input;
}

export async function changePlan({
	env,
	db,
	scope,
	id,
	input,
}: PlanMoveArgs<ChangePlanInput>): Promise<SubscriptionView> {
	const loaded = await loadSubscription(db, scope, id);
	assertActive(loaded, "changed");
	const { view } = loaded;
	const target = await changeTarget(db, scope, view, input);
	const current = { id: view.rate_plan_id, version: view.rate_plan_version };
	if (samePlan(target, current) && pendingOf(view) === null) {
		throw conflict(
			`Subscription ${id} is already on rate plan ${target.id} version ${target.version}; nothing to change.`,
		);
	}
	return moveToPlan({ env, db, scope, id }, target);
}
