/**
 * Who an accumulator is, read from its name alone. There is one accumulator per subscription (`live:sub:sub_…`)
 * and one per instance that is in no active subscription (`live:inst:<agent key>`); the name tells an
 * accumulator its environment and what it counts for.
 *
 * A hot subscription may have N shards (its `shards`, fixed at creation): then it has N accumulators,
 * `live:sub:sub_…~k` for k in 0…N−1, and an instance's events all go to shard shardOf(agent key, N), so its
 * dedupe keys are all in one place. N = 1 is the plain name, so subscriptions made before shards are unchanged.
 * Shard 0 is the subscription's head: it holds the alerts and the budget holds, evaluated on what every shard
 * reports (parts/shards.ts).
 *
 * This module imports nothing of the accumulator: every floor of it (storage, parts, the object) and the
 * outside's client may read it.
 */
import type { Env, Environment } from "../../env";

/** `shard` is given for a sharded subscription only (N > 1). */
export type AccumulatorTarget = { subscriptionId: string; shard?: number } | { agentKey: string };

export interface AccumulatorIdentity {
	environment: Environment;
	kind: "sub" | "inst";
	/** The subscription id, or the instance's agent key. */
	id: string;
	/** The shard of a sharded subscription; null for an unsharded one and for an instance. */
	shard: number | null;
}

export const MAX_SHARDS = 64;

export function accumulatorName(environment: Environment, target: AccumulatorTarget): string {
	if (!("subscriptionId" in target)) return `${environment}:inst:${target.agentKey}`;
	const suffix = target.shard === undefined ? "" : `~${target.shard}`;
	return `${environment}:sub:${target.subscriptionId}${suffix}`;
}

/** FNV-1a (32 bits) over the key's UTF-8 bytes: stable across isolates, releases and runtimes. */
export function fnv1a(text: string): number {
	let hash = 0x811c9dc5;
	for (const byte of new TextEncoder().encode(text)) {
		hash ^= byte;
		hash = Math.imul(hash, 0x01000193) >>> 0;
	}
	return hash;
}

/** The shard of a subscription with `shards` shards that counts an instance's events. */
export function shardOf(agentKey: string, shards: number): number {
	return shards <= 1 ? 0 : fnv1a(agentKey) % shards;
}

/** Every accumulator of a subscription, head (shard 0) first. */
export function subscriptionAccumulators(
	environment: Environment,
	subscriptionId: string,
	shards: number,
): string[] {
	if (shards <= 1) return [accumulatorName(environment, { subscriptionId })];
	return Array.from({ length: shards }, (_, shard) =>
		accumulatorName(environment, { subscriptionId, shard }),
	);
}

/** The accumulator of a subscription that counts the instance's events. */
export function subscriptionAccumulatorOf(
	environment: Environment,
	subscriptionId: string,
	shards: number,
	agentKey: string,
): string {
	if (shards <= 1) return accumulatorName(environment, { subscriptionId });
	return accumulatorName(environment, { subscriptionId, shard: shardOf(agentKey, shards) });
}

/** The subscription's head: the accumulator that holds its alerts (its only one when unsharded). */
export function headAccumulator(environment: Environment, subscriptionId: string, shards: number): string {
	return accumulatorName(environment, shards <= 1 ? { subscriptionId } : { subscriptionId, shard: 0 });
}

export function parseAccumulatorName(name: string): AccumulatorIdentity {
	// Agent keys may contain ":" and "~", so only the first two separators count, and "~k" only after a
	// subscription id (which never contains "~").
	const match = /^(live|test):(sub|inst):(.+)$/.exec(name);
	if (!match) throw new Error(`Not a usage accumulator name: ${name}`);
	const environment = match[1] as Environment;
	const kind = match[2] as "sub" | "inst";
	const shard = kind === "sub" ? /^([^~]+)~(\d+)$/.exec(match[3] as string) : null;
	if (shard) return { environment, kind, id: shard[1] as string, shard: Number(shard[2]) };
	return { environment, kind, id: match[3] as string, shard: null };
}

/** The subscription whose events an accumulator counts: null for an instance's own accumulator. */
export function subscriptionOf(identity: AccumulatorIdentity): string | null {
	return identity.kind === "sub" ? identity.id : null;
}

/** A subscription's accumulator that holds its alerts and budget holds: its only one, or shard 0. */
export function isHead(identity: AccumulatorIdentity): boolean {
	return identity.kind === "sub" && (identity.shard === null || identity.shard === 0);
}

/**
 * Generations order the membership changes of one instance, whatever order their messages arrive in. They come
 * from the membership row ids of subscription_instances (increasing): a row opened gives 2·id (the subscription
 * holds the instance), the same row closed gives 2·id + 1 (its instance accumulator holds it again). An instance
 * that was never in a subscription has generation 0.
 */
export const membershipGeneration = {
	opened: (membershipId: number) => 2 * membershipId,
	closed: (membershipId: number) => 2 * membershipId + 1,
};

/** The object itself, for what accumulators ask each other; the rest of the Worker uses handle.ts. */
export function accumulatorStub(env: Env, name: string) {
	return env.USAGE_ACCUMULATOR.get(env.USAGE_ACCUMULATOR.idFromName(name));
}
