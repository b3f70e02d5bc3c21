/**
 * The event explorer (GET /v1/events, docs/metering.md#the-event-explorer): raw events read from the accumulators that counted them, so an event
 * shows as soon as it was answered. By subscription, its accumulators (every shard); by instance, every accumulator
 * the instance passed through (its own and, per subscription it was in, the shard that counted it), merged.
 * Newest timestamp first, then id; the cursor is the last event of a page. Below what an accumulator still keeps
 * (its retention, or less when its size cap purged early), pages continue from the R2 archive (archive-pages.ts).
 */
import type { WithEnv } from "../db/rows";
import {
	accumulatorName,
	subscriptionAccumulators,
	usageAccumulator,
} from "../durable-objects/usage-accumulator/handle";
import type { RetainedEvents } from "../durable-objects/usage-accumulator/interface";
import type { EventView } from "../durable-objects/usage-accumulator/parts/archive";
import { validationError } from "../lib/errors";
import { subscriptionAccumulatorsOf } from "../subscriptions/memberships";
import { getSubscription } from "../subscriptions/views";
import { latest, newerThan, pageWithArchive } from "./archive-pages";
import { newestFirstView } from "./views";

export interface EventQuery {
	subscriptionId?: string;
	agentKey?: string;
	kind?: "action" | "outcome";
	type?: string;
	/** [from, to) on timestamps, ISO 8601 UTC. */
	from: string;
	to: string;
	limit: number;
	cursor?: string;
}

export interface EventPage {
	events: EventView[];
	next_cursor: string | null;
}

type Cursor = { timestamp: string; id: string };

export function encodeCursor(event: Cursor): string {
	return btoa(JSON.stringify([event.timestamp, event.id]))
		.replaceAll("+", "-")
		.replaceAll("/", "_")
		.replaceAll("=", "");
}

export function decodeCursor(cursor: string): Cursor {
	try {
		const text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
		const [timestamp, id] = JSON.parse(text) as unknown[];
		if (typeof timestamp === "string" && typeof id === "string" && !Number.isNaN(Date.parse(timestamp))) {
			return { timestamp, id };
		}
	} catch {}
	throw validationError("cursor", "cursor must be a next_cursor returned by this endpoint.");
}

export async function listEvents({
	env,
	db,
	scope,
	query,
}: WithEnv & {
	query: EventQuery;
}): Promise<EventPage> {
	const before = query.cursor === undefined ? null : decodeCursor(query.cursor);
	let names: string[];
	if (query.subscriptionId !== undefined) {
		const subscription = await getSubscription({ db, scope, id: query.subscriptionId });
		names = subscriptionAccumulators(scope.environment, subscription.id, subscription.shards);
	} else {
		const agentKey = query.agentKey as string;
		names = [
			accumulatorName(scope.environment, { agentKey }),
			...(await subscriptionAccumulatorsOf(db, scope, agentKey)),
		];
	}
	// One more than a page: whether there is a next one.
	const pages = await Promise.all(
		names.map((name) =>
			usageAccumulator(env, name).events({
				from: query.from,
				to: query.to,
				before,
				agentKey: query.agentKey,
				kind: query.kind,
				type: query.type,
				limit: query.limit + 1,
			}),
		),
	);
	const live = (pages.flatMap((page) => page.events) as EventView[]).sort(newestFirstView);
	const retainedAfter = new Map(names.map((name, i) => [name, (pages[i] as RetainedEvents).retainedAfter]));
	// The common case: a page of events newer than anything an accumulator dropped needs no archive.
	const newestDropped = latest(retainedAfter.values());
	const kept = newerThan(live, newestDropped);
	const { events, more } =
		kept.length > query.limit
			? { events: kept.slice(0, query.limit), more: true }
			: await pageWithArchive(env, scope, { ...query, before, retainedAfter }, live);
	const last = events.at(-1);
	return { events, next_cursor: more && last ? encodeCursor(last) : null };
}
