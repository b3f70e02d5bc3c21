/**
 * How the rest of the Worker reaches usage accumulators. There is one accumulator per subscription
 * (`live:sub:sub_…`) and one per instance that is in no active subscription (`live:inst:<agent key>`); the name
 * alone tells an accumulator its environment and what it counts for.
 */
import type { Env, Environment } from "../../env";

export type AccumulatorTarget = { subscriptionId: string } | { agentKey: string };

export interface AccumulatorIdentity {
	environment: Environment;
	kind: "sub" | "inst";
	/** The subscription id, or the instance's agent key. */
	id: string;
}

export function accumulatorName(environment: Environment, target: AccumulatorTarget): string {
	return "subscriptionId" in target
		? `${environment}:sub:${target.subscriptionId}`
		: `${environment}:inst:${target.agentKey}`;
}

export function parseAccumulatorName(name: string): AccumulatorIdentity {
	// Agent keys may contain ":", so only the first two separators count.
	const match = /^(live|test):(sub|inst):(.+)$/.exec(name);
	if (!match) throw new Error(`Not a usage accumulator name: ${name}`);
	return { environment: match[1] as Environment, kind: match[2] as "sub" | "inst", id: match[3] as string };
}

/** The subscription whose events an accumulator counts: null for an instance's own accumulator. */
export function subscriptionOf(identity: AccumulatorIdentity): string | null {
	return identity.kind === "sub" ? identity.id : null;
}

export function accumulatorStub(env: Env, name: string) {
	return env.USAGE_ACCUMULATOR.get(env.USAGE_ACCUMULATOR.idFromName(name));
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

const FLUSH_CONCURRENCY = 20;
const MAX_FLUSH_CALLS = 50;

/**
 * Writes everything the named accumulators have counted to D1 and returns once it is there. Invoicing calls it
 * for the subscriptions of a period before rating, so an invoice never misses usage still in flight.
 */
export async function flushAccumulators(env: Env, names: string[]): Promise<void> {
	const queue = [...new Set(names)];
	const worker = async () => {
		for (let name = queue.shift(); name !== undefined; name = queue.shift()) {
			const stub = accumulatorStub(env, name);
			for (let call = 0; call < MAX_FLUSH_CALLS; call++) {
				if ((await stub.flush()).complete) break;
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(FLUSH_CONCURRENCY, queue.length) }, worker));
}
