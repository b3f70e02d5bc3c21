/**
 * An instance's dedupe keys travel with it (docs/metering.md#deduplication). When an accumulator holds an instance at a membership generation
 * newer than the keys it has for it (it was told of the move, or a placement's claim said so), it takes the instance
 * over before it counts any of its events:
 *
 * 1. it asks D1 which accumulators held the instance before that generation, within the dedupe window: the
 *    instance's own one and every subscription the instance was in;
 * 2. each of them releases the instance at that generation — from then on it refuses its events, so a Worker
 *    with a stale route is sent to the new holder — and, in the same storage transaction, hands over the keys it
 *    has for it (in pages);
 * 3. the new holder stores the keys, then marks the instance taken over at that generation.
 *
 * Every step can be repeated. A crash between 2 and 3 leaves the old holders refusing and the new holder not yet
 * counting: the next event (or announcement) runs the handover again. Nothing is counted anywhere in between, so
 * the first copy of a key counted by any holder is seen by every later one. Asking every earlier holder, rather
 * than only the one just before, means a holder that never took its turn (no event came while it held the
 * instance) cannot break the chain. Generations (identity.ts) make an old handover harmless: a release older than
 * what a holder knows changes nothing there.
 */
import type { Env } from "../../../env";
import {
	type AccumulatorIdentity,
	accumulatorName,
	accumulatorStub,
	parseAccumulatorName,
	subscriptionAccumulatorOf,
} from "../identity";
import { DEDUPE_TTL_MS, type DedupeRow } from "../storage/dedupe";
import type { Handover } from "../types";
import type { AccumulatorParts } from "./context";
import { faultsOf, type HandoverHooks } from "./faults";

/** Keys per release call: a few hundred kilobytes of RPC. */
export const HANDOVER_PAGE_SIZE = 1_000;

/** The names of the accumulators that may have counted events of the instance before `generation`. */
export async function earlierHolders(
	d1: D1Database,
	self: AccumulatorIdentity & { name: string },
	handover: Handover,
	now: number,
): Promise<string[]> {
	const { results } = await d1
		.prepare(
			`SELECT DISTINCT m.subscription_id, coalesce(s.shards, 1) AS shards FROM subscription_instances AS m
			LEFT JOIN subscriptions AS s ON s.id = m.subscription_id
			WHERE m.environment = ?1 AND m.agent_key = ?2 AND m.id <= ?3 AND (m.removed_at IS NULL OR m.removed_at > ?4)`,
		)
		.bind(
			self.environment,
			handover.agentKey,
			Math.floor(handover.generation / 2),
			new Date(now - DEDUPE_TTL_MS).toISOString(),
		)
		.all<{ subscription_id: string; shards: number }>();
	const names = [
		accumulatorName(self.environment, { agentKey: handover.agentKey }),
		// Of a sharded subscription, only the instance's shard ever held it.
		...results.map((row) =>
			subscriptionAccumulatorOf(self.environment, row.subscription_id, row.shards, handover.agentKey),
		),
	];
	return names.filter((name) => name !== self.name);
}

export interface HandoverStore {
	storeHandedKeys(rows: DedupeRow[]): void;
	markTakenOver(handover: Handover): void;
}

/** Steps 1–3 above. */
export async function takeOver(
	env: Env,
	self: AccumulatorIdentity & { name: string },
	store: HandoverStore,
	handover: Handover,
	hooks: HandoverHooks,
): Promise<void> {
	const holders = await earlierHolders(env.DB, self, handover, Date.now());
	await Promise.all(
		holders.map(async (holder) => {
			const stub = accumulatorStub(env, holder);
			for (let after: string | null = null; ; ) {
				const page = (await stub.releaseInstance(
					handover.agentKey,
					handover.generation,
					after,
					HANDOVER_PAGE_SIZE,
				)) as unknown as DedupeRow[];
				hooks.afterRelease?.(holder);
				store.storeHandedKeys(page);
				if (page.length < HANDOVER_PAGE_SIZE) break;
				after = (page.at(-1) as DedupeRow)[1];
			}
		}),
	);
	store.markTakenOver(handover);
}

/** One handover at a time per instance and generation; concurrent calls wait for the same one. */
export class HandoverRuns {
	private readonly running = new Map<string, Promise<void>>();

	once(parts: AccumulatorParts, name: string, handover: Handover): Promise<void> {
		const key = `${handover.agentKey}\u0000${handover.generation}`;
		let run = this.running.get(key);
		if (run === undefined) {
			run = takeOver(
				parts.env,
				{ ...parseAccumulatorName(name), name },
				parts.store,
				handover,
				faultsOf(parts.state).handover ?? {},
			).finally(() => this.running.delete(key));
			this.running.set(key, run);
		}
		return run;
	}
}
