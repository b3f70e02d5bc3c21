import { runInDurableObject } from "cloudflare:test";
import type { UsageAccumulator } from "../../src/durable-objects/usage-accumulator/object";
import { countInStore } from "../../src/durable-objects/usage-accumulator/parts/counting";
import { injectFaults } from "../../src/durable-objects/usage-accumulator/parts/faults";
import type { AccumulatorStore } from "../../src/durable-objects/usage-accumulator/storage/store";
import type { RecordRequest } from "../../src/durable-objects/usage-accumulator/types";
import type { subscriptionAccumulator } from "../subscriptions/fixtures";

/**
 * Makes the accumulator (named `name`)'s next flush count one `search` action of `agentKey` (id `eventId`) while its first D1
 * batch is being written: after the chunk was read, before it is marked flushed.
 */
export async function countDuringNextBatch(
	stub: ReturnType<typeof subscriptionAccumulator>,
	{
		name,
		accountId,
		agentKey,
		eventId,
	}: { name: string; accountId: string; agentKey: string; eventId: string },
): Promise<void> {
	await runInDurableObject(stub, (instance: UsageAccumulator, state) => {
		const now = new Date().toISOString();
		const late: RecordRequest = {
			name,
			accountId,
			claims: {},
			events: [
				{
					id: eventId,
					kind: "action",
					agentKey,
					type: "search",
					value: null,
					metadata: null,
					timestamp: now,
					receivedAt: now,
					idempotencyKey: null,
				},
			],
		};
		injectFaults(state, {
			flush: {
				beforeBatch: () => {
					injectFaults(state, {});
					countInStore((instance as unknown as { store: AccumulatorStore }).store, late, Date.now());
				},
			},
		});
	});
}

/**
 * A flush that a test made fail, run inside the object: its error is caught there and answered, rather than
 * crossing the RPC boundary, where the runtime would log it as an uncaught exception in a passing run.
 */
export function failedFlush(stub: ReturnType<typeof subscriptionAccumulator>): Promise<unknown> {
	return runInDurableObject(stub, (instance: UsageAccumulator) =>
		instance.flush().catch((error: unknown) => error),
	);
}
