/**
 * Instances in subscriptions: the membership rows of subscription_instances, and telling the usage accumulators
 * who holds which instance. A partial unique index keeps an instance in at most one active subscription even when
 * two requests race; the checks here only give the loser of an ordinary conflict a clearer message.
 */
import { and, desc, eq, gt, isNull, ne, sql } from "drizzle-orm";
import { statement } from "../db/batch";
import type { Db } from "../db/client";
import { subscriptionInstances, subscriptions } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import {
	accumulatorName,
	membershipGeneration,
	subscriptionAccumulatorOf,
	usageAccumulator,
} from "../durable-objects/usage-accumulator/handle";
import { forgetRoutes } from "../durable-objects/usage-accumulator/placement";
import type { Env } from "../env";
import { conflict } from "../lib/errors";

export interface MembershipChange {
	agentKey: string;
	/** The subscription_instances row opened or closed. */
	membershipId: number;
	opened: boolean;
}

export function inKeys(column: typeof subscriptionInstances.agentKey, keys: string[]) {
	return sql`${column} IN (SELECT value FROM json_each(${JSON.stringify(keys)}))`;
}

/** The query for memberships of `keys` open in subscriptions other than `exceptSubscriptionId`. */
export function busyInstancesQuery(db: Db, scope: Scope, keys: string[], exceptSubscriptionId?: string) {
	return db
		.select({
			agentKey: subscriptionInstances.agentKey,
			subscriptionId: subscriptionInstances.subscriptionId,
		})
		.from(subscriptionInstances)
		.where(
			inScope(
				scope,
				subscriptionInstances,
				and(
					isNull(subscriptionInstances.removedAt),
					inKeys(subscriptionInstances.agentKey, keys),
					exceptSubscriptionId === undefined
						? undefined
						: ne(subscriptionInstances.subscriptionId, exceptSubscriptionId),
				),
			),
		);
}

export function assertNoneBusy(busy: { agentKey: string; subscriptionId: string }[]): void {
	const first = busy[0];
	if (!first) return;
	const others = busy.length > 1 ? ` (and ${busy.length - 1} more)` : "";
	throw conflict(
		`Instance '${first.agentKey}'${others} is already in active subscription ${first.subscriptionId}; ` +
			"an instance can be in one active subscription at a time.",
	);
}

/**
 * The query for memberships of `keys` in other subscriptions that ended after `since`: a subscription starting
 * at `since` would hold those instances while they still belonged to another one, and with a prorating plan both
 * would bill the overlap. (Open memberships are the busy ones above.)
 */
export function endedAfterQuery(db: Db, scope: Scope, keys: string[], since: string) {
	return db
		.select({
			agentKey: subscriptionInstances.agentKey,
			subscriptionId: subscriptionInstances.subscriptionId,
			removedAt: subscriptionInstances.removedAt,
		})
		.from(subscriptionInstances)
		.where(
			inScope(
				scope,
				subscriptionInstances,
				and(gt(subscriptionInstances.removedAt, since), inKeys(subscriptionInstances.agentKey, keys)),
			),
		)
		.orderBy(desc(subscriptionInstances.removedAt))
		.limit(1);
}

export function assertNoOverlap(
	ended: { agentKey: string; subscriptionId: string; removedAt: string | null }[],
	startedAt: string,
): void {
	const last = ended[0];
	if (!last?.removedAt) return;
	throw conflict(
		`Instance '${last.agentKey}' belonged to subscription ${last.subscriptionId} until ${last.removedAt}; ` +
			`a subscription starting at ${startedAt} would hold it at the same time. Start it at ${last.removedAt} ` +
			"or later: an instance can be in one subscription at a time.",
	);
}

export const raceConflict = () =>
	conflict(
		"An instance of this request was just added to another active subscription; it can be in only one.",
	);

/** Opens a membership for each key; RETURNING gives the row ids (the generations of the change). */
export function openMembershipsStatement(
	d1: D1Database,
	scope: Scope,
	subscriptionId: string,
	keys: string[],
	at: string,
) {
	return statement(
		d1,
		`INSERT INTO subscription_instances (environment, subscription_id, agent_key, added_at)
		SELECT ?1, ?2, k.value, ?3 FROM json_each(?4) AS k ORDER BY k.key
		RETURNING id, agent_key`,
		scope.environment,
		subscriptionId,
		at,
		JSON.stringify(keys),
	);
}

/** Closes the open memberships of the subscription (all of them, or those of `keys`), returning them. */
export function closeMembershipsStatement(
	d1: D1Database,
	scope: Scope,
	subscriptionId: string,
	at: string,
	keys?: string[],
) {
	return statement(
		d1,
		`UPDATE subscription_instances SET removed_at = ?3
		WHERE environment = ?1 AND subscription_id = ?2 AND removed_at IS NULL
		AND (?4 IS NULL OR agent_key IN (SELECT value FROM json_each(?4)))
		RETURNING id, agent_key`,
		scope.environment,
		subscriptionId,
		at,
		keys === undefined ? null : JSON.stringify(keys),
	);
}

export function membershipChanges(
	rows: { id: number; agent_key: string }[],
	opened: boolean,
): MembershipChange[] {
	return rows.map((row) => ({ agentKey: row.agent_key, membershipId: row.id, opened }));
}

/**
 * Tells the subscription's accumulator (of a sharded one, the shard of each instance) and each instance's own
 * accumulator who holds the instance now, before
 * the change is answered, so that events received from then on are counted by the new holder. A failed call is
 * logged, not raised: the change is stored, new holders learn it from the routes of the next events, and stale
 * routes expire within a minute.
 */
export async function announceMembershipChanges(
	env: Env,
	scope: Scope,
	subscription: { id: string; accountId: string; shards: number },
	changes: MembershipChange[],
): Promise<void> {
	if (changes.length === 0) return;
	forgetRoutes(
		scope.environment,
		changes.map((change) => change.agentKey),
	);
	const generation = (change: MembershipChange) =>
		change.opened
			? membershipGeneration.opened(change.membershipId)
			: membershipGeneration.closed(change.membershipId);
	const byShard = new Map<string, MembershipChange[]>();
	for (const change of changes) {
		const name = subscriptionAccumulatorOf(
			scope.environment,
			subscription.id,
			subscription.shards,
			change.agentKey,
		);
		byShard.set(name, [...(byShard.get(name) ?? []), change]);
	}
	const calls = [
		...[...byShard].map(([subscriptionName, held]) =>
			usageAccumulator(env, subscriptionName).updateHoldings(
				subscription.accountId,
				held.map((change) => ({
					agentKey: change.agentKey,
					generation: generation(change),
					held: change.opened,
				})),
			),
		),
		...changes.map((change) => {
			const instanceName = accumulatorName(scope.environment, { agentKey: change.agentKey });
			return usageAccumulator(env, instanceName).updateHoldings(null, [
				{ agentKey: change.agentKey, generation: generation(change), held: !change.opened },
			]);
		}),
	];
	const errors = (await Promise.allSettled(calls)).flatMap((r) =>
		r.status === "rejected" ? [String(r.reason)] : [],
	);
	if (errors.length > 0) {
		console.error(JSON.stringify({ at: "announceMembershipChanges", subscription: subscription.id, errors }));
	}
}

/**
 * The accumulators that counted the instance in every subscription it has ever been in: of each, the shard that
 * holds its key.
 */
export async function subscriptionAccumulatorsOf(db: Db, scope: Scope, agentKey: string): Promise<string[]> {
	const rows = await db
		.selectDistinct({ subscriptionId: subscriptionInstances.subscriptionId, shards: subscriptions.shards })
		.from(subscriptionInstances)
		.innerJoin(subscriptions, eq(subscriptions.id, subscriptionInstances.subscriptionId))
		.where(and(inScope(scope, subscriptionInstances), eq(subscriptionInstances.agentKey, agentKey)));
	return rows.map((row) =>
		subscriptionAccumulatorOf(scope.environment, row.subscriptionId, row.shards, agentKey),
	);
}
