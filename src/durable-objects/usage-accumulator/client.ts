/**
 * How the rest of the Worker reaches usage accumulators. There is one accumulator per subscription
 * (`live:sub:sub_…`) and one per instance that is in no active subscription (`live:inst:<agent key>`); the name
 * alone tells an accumulator its environment and what it counts for.
 *
 * A hot subscription may have N shards (its `shards`, fixed at creation): then it has N accumulators,
 * `live:sub:sub_…~k` for k in 0…N−1, and an instance's events all go to shard shardOf(agent key, N), so its
 * dedupe keys are all in one place. N = 1 is the plain name, so subscriptions made before shards are unchanged.
 * Shard 0 is the subscription's head: it holds the alerts, evaluated on what every shard reports (shards.ts).
 */
import type { Env, Environment } from "../../env";
import type { UsageAggregate } from "../../pricing/quantities";
import type { MetricQuantity } from "../../pricing/sources";
import type { AdoptedEvent } from "./adoption";
import type { AlertRule } from "./alerts";
import type { RetainedEvents, UsageAccumulatorClient } from "./interface";
import type { RawEventQuery } from "./raw-events";
import type {
	BudgetView,
	ReleaseAnswer,
	ReservationView,
	ReserveAnswer,
	ReserveRequest,
} from "./reservations";
import type { FlushReport, HoldingChange, RecordRequest, RecordResponse, UsageQuery } from "./types";
import { encodeEvents } from "./wire";

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

/** The object itself, for what accumulators ask each other; the rest of the Worker uses usageAccumulator. */
export function accumulatorStub(env: Env, name: string) {
	return env.USAGE_ACCUMULATOR.get(env.USAGE_ACCUMULATOR.idFromName(name));
}

/** The named accumulator, as the rest of the Worker calls it (interface.ts). */
export function usageAccumulator(env: Env, name: string): UsageAccumulatorClient {
	return new AccumulatorClient(name, accumulatorStub(env, name));
}

/**
 * Each method is one RPC call, under the object's method name of today (object.ts keeps those names, so Workers
 * of two versions and objects of two versions can call each other during a rollout). RPC types lose the length
 * of tuples and the exact shape of answers: the casts restore what the object answers.
 */
class AccumulatorClient implements UsageAccumulatorClient {
	constructor(
		readonly name: string,
		private readonly stub: ReturnType<typeof accumulatorStub>,
	) {}

	record(request: Omit<RecordRequest, "name">): Promise<RecordResponse> {
		const { accountId, billableFrom, claims, events } = request;
		return this.stub.record({
			name: this.name,
			accountId,
			billableFrom,
			claims,
			events: encodeEvents(events),
		}) as Promise<RecordResponse>;
	}

	updateHoldings(accountId: string | null, changes: HoldingChange[]): Promise<void> {
		return this.stub.updateHoldings(this.name, accountId, changes);
	}

	countedUsage({ startDay, endDay, agentKey }: UsageQuery): Promise<UsageAggregate[]> {
		return this.stub.usage(startDay, endDay, agentKey) as Promise<UsageAggregate[]>;
	}

	billableUsage(queries: UsageQuery[]): Promise<UsageAggregate[][]> {
		return this.stub.usageOf(queries) as Promise<UsageAggregate[][]>;
	}

	metrics(period: string): Promise<MetricQuantity[]> {
		return this.stub.metricsOf(period) as Promise<MetricQuantity[]>;
	}

	events(query: RawEventQuery): Promise<RetainedEvents> {
		return this.stub.events(query) as Promise<RetainedEvents>;
	}

	setAlert(accountId: string | null, rule: AlertRule): Promise<void> {
		return this.stub.setAlert(this.name, accountId, rule);
	}

	removeAlert(id: string): Promise<void> {
		return this.stub.removeAlert(id);
	}

	blockedBy(): Promise<string[]> {
		return this.stub.blockedBy() as Promise<string[]>;
	}

	entitlement(): Promise<{ blockedBy: string[]; budget: BudgetView | null }> {
		return this.stub.entitlement(this.name) as Promise<{ blockedBy: string[]; budget: BudgetView | null }>;
	}

	reserve(accountId: string | null, request: ReserveRequest): Promise<ReserveAnswer> {
		return this.stub.reserve(this.name, accountId, request) as Promise<ReserveAnswer>;
	}

	reservation(id: string): Promise<ReservationView | null> {
		return this.stub.reservation(this.name, id) as Promise<ReservationView | null>;
	}

	releaseReservation(id: string): Promise<ReleaseAnswer> {
		return this.stub.releaseReservation(this.name, id) as Promise<ReleaseAnswer>;
	}

	setAsideFor(
		{ subscriptionId, from, generation }: { subscriptionId: string; from: string; generation: number },
		after: string | null,
		limit: number,
	): Promise<AdoptedEvent[]> {
		return this.stub.setAsideFor(subscriptionId, from, generation, after, limit) as unknown as Promise<
			AdoptedEvent[]
		>;
	}

	absorbedThrough(agentKey: string): Promise<string | null> {
		return this.stub.absorbedThrough(agentKey) as Promise<string | null>;
	}

	absorb(
		absorber: { accountId: string | null; billableFrom: string | null; agentKey: string },
		page: AdoptedEvent[],
	): Promise<number> {
		return this.stub.absorb({ name: this.name, ...absorber }, page) as Promise<number>;
	}

	flush(): Promise<FlushReport> {
		return this.stub.flush() as Promise<FlushReport>;
	}
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
			const accumulator = usageAccumulator(env, name);
			for (let call = 0; call < MAX_FLUSH_CALLS; call++) {
				if ((await accumulator.flush()).complete) break;
			}
		}
	};
	await Promise.all(Array.from({ length: Math.min(FLUSH_CONCURRENCY, queue.length) }, worker));
}
