/**
 * Whether the work running in this context (an API request) has written outbox rows: outboxInsert notes it, and
 * the request's dispatch (after-answer.ts) then delivers them without each handler having to remember. Apart from
 * outbox.ts, whose table definitions a request that writes nothing never needs (docs/scaling.md#cold-start).
 */
import { AsyncLocalStorage } from "node:async_hooks";

const outboxWrites = new AsyncLocalStorage<{ wrote: boolean }>();

/** Runs `work` and answers whether it wrote outbox rows (built an outboxInsert statement). */
export async function noticingOutboxWrites(work: () => Promise<void>): Promise<boolean> {
	const seen = { wrote: false };
	await outboxWrites.run(seen, work);
	return seen.wrote;
}

export function noteOutboxWrite(): void {
	const seen = outboxWrites.getStore();
	if (seen) seen.wrote = true;
}
