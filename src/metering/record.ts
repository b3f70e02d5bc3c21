/**
 * Recording events: route each to its accumulator, send every accumulator its events in one call, and re-route
 * what an accumulator refused (its instance moved) after refreshing those keys from D1.
 */
import type { Scope } from "../db/scope";
import { usageAccumulator } from "../durable-objects/usage-accumulator/handle";
import { routesFor } from "../durable-objects/usage-accumulator/placement";
import type { MeteringEvent, StoredEvent } from "../durable-objects/usage-accumulator/types";
import type { Env } from "../env";
import { DomainError } from "../lib/errors";

export interface RecordedEvent {
	status: "processed" | "duplicate";
	event: StoredEvent;
}

// A fresh route is accepted unless the instance moved again meanwhile, so more rounds than this mean churn.
const MAX_ROUTING_ROUNDS = 4;

/** Results in the order of `events`. A duplicate's event is the original one. */
export async function recordEvents({
	env,
	scope,
	events,
}: {
	env: Env;
	scope: Scope;
	events: readonly MeteringEvent[];
}): Promise<RecordedEvent[]> {
	const recorded: (RecordedEvent | undefined)[] = new Array(events.length);
	let pending = events.map((_, index) => index);
	let refresh = new Set<string>();
	for (let round = 0; round < MAX_ROUTING_ROUNDS && pending.length > 0; round++) {
		const keys = [...new Set(pending.map((index) => (events[index] as MeteringEvent).agentKey))];
		const routes = await routesFor(env.DB, scope, keys, refresh);
		const byAccumulator = new Map<string, number[]>();
		for (const index of pending) {
			const route = routes.get((events[index] as MeteringEvent).agentKey);
			if (!route) throw new Error(`No route for agent key ${(events[index] as MeteringEvent).agentKey}`);
			const group = byAccumulator.get(route.accumulator);
			if (group) group.push(index);
			else byAccumulator.set(route.accumulator, [index]);
		}
		const refused: number[] = [];
		refresh = new Set();
		await Promise.all(
			[...byAccumulator].map(async ([name, indices]) => {
				const batch = indices.map((index) => events[index] as MeteringEvent);
				const claims: Record<string, number> = {};
				for (const event of batch) claims[event.agentKey] = routes.get(event.agentKey)?.generation ?? 0;
				const first = routes.get(batch[0]?.agentKey ?? "");
				const accountId = first?.accountId ?? null;
				const response = await usageAccumulator(env, name).record({
					accountId,
					billableFrom: first?.startedAt ?? null,
					claims,
					events: batch,
				});
				// A processed event is stored as sent, with the accumulator's subscription: it does not travel back.
				const subscriptionId = first?.subscriptionId ?? null;
				response.results.forEach((result, i) => {
					const index = indices[i] as number;
					if (result === null) refused.push(index);
					else if (result === "processed") {
						recorded[index] = {
							status: "processed",
							event: { ...(batch[i] as MeteringEvent), subscriptionId },
						};
					} else recorded[index] = result;
				});
				for (const agentKey of response.refused) refresh.add(agentKey);
			}),
		);
		pending = refused.sort((a, b) => a - b);
	}
	if (pending.length > 0) {
		throw new DomainError(
			"internal_error",
			"The events' instances are being moved between subscriptions; retry.",
		);
	}
	return recorded as RecordedEvent[];
}
