/**
 * Metering events without zod: the limits the schemas of events.ts check, a stored event as the API answers it
 * (its view and that view written as JSON directly), and an input turned into the event to record. The ingest
 * app answers plain bodies with these alone, before zod is loaded (docs/scaling.md#cold-start).
 */
import type { EventKind, MeteringEvent, StoredEvent } from "../durable-objects/usage-accumulator/types";
import { Decimal } from "../lib/decimal";
import { newId } from "../lib/ids";
import { repeatedJson } from "../lib/json";
import type { ActionInput, OutcomeInput } from "./events";

export const EVENT_TYPE = /^[A-Za-z0-9._:-]{1,100}$/;
export const MAX_FUTURE_MS = 5 * 60 * 1000;
export const MAX_PAST_MS = 35 * 24 * 60 * 60 * 1000;
export const MAX_METADATA_KEYS = 50;
export const MAX_METADATA_BYTES = 8 * 1024;
export const MAX_BATCH_EVENTS = 1000;

/**
 * What Timestamp of events.ts accepts: zod's ISO 8601 date-time with an offset (its very pattern,
 * test/metering/event-records.test.ts compares them) within the window, against now.
 */
export const ISO_DATETIME_WITH_OFFSET =
	/^(?:(?:\d\d[2468][048]|\d\d[13579][26]|\d\d0[48]|[02468][048]00|[13579][26]00)-02-29|\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\d|30)|(?:02)-(?:0[1-9]|1\d|2[0-8])))T(?:(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?(?:Z|([+-](?:[01]\d|2[0-3]):[0-5]\d)))$/;

export function isEventTimestamp(value: unknown): boolean {
	if (typeof value !== "string" || !ISO_DATETIME_WITH_OFFSET.test(value)) return false;
	const at = Date.parse(value);
	return !(at > Date.now() + MAX_FUTURE_MS) && !(at < Date.now() - MAX_PAST_MS);
}

export function toMeteringEvent(
	kind: EventKind,
	input: ActionInput | OutcomeInput,
	receivedAt: string,
	idempotencyKey: string | null,
): MeteringEvent {
	const outcome = kind === "outcome" ? (input as OutcomeInput) : null;
	return {
		id: newId(outcome ? "out" : "act"),
		kind,
		agentKey: input.agent_key,
		type: outcome ? outcome.outcome_type : (input as ActionInput).action_type,
		value: outcome ? Decimal.from(outcome.value).toString() : null,
		metadata: input.metadata ?? null,
		timestamp: input.timestamp === undefined ? receivedAt : new Date(input.timestamp).toISOString(),
		receivedAt,
		idempotencyKey,
	};
}

export type EventStatus = "processed" | "duplicate";

export function eventView(event: StoredEvent, status: EventStatus = "processed") {
	// Object literals, not spreads: batches build a thousand of these, and literals serialize faster.
	return event.kind === "action"
		? {
				id: event.id,
				status,
				created_at: event.receivedAt,
				agent_key: event.agentKey,
				action_type: event.type,
				metadata: event.metadata ?? {},
				timestamp: event.timestamp,
				subscription_id: event.subscriptionId,
			}
		: {
				id: event.id,
				status,
				created_at: event.receivedAt,
				agent_key: event.agentKey,
				outcome_type: event.type,
				value: Decimal.from(event.value ?? "0").toNumber(),
				metadata: event.metadata ?? {},
				timestamp: event.timestamp,
				subscription_id: event.subscriptionId,
			};
}

/**
 * JSON.stringify(eventView(event, status)), written directly: a batch answers a thousand of these, and building
 * the views and then serializing them cost several times more (node micro-bench, 1,000 views: 0.85 ms vs 2.4 ms).
 * Ids and timestamps are made here (ids of [a-z0-9_], ISO dates), so they are written as they are; every other
 * value goes through JSON.stringify — an agent key, a type or a subscription once for a run of equal ones when a
 * writer answers a whole batch (0.9 against 1.2-1.3 µs an event). test/metering/event-json.test.ts holds it to
 * the view.
 */
export function eventJsonWriter(): (event: StoredEvent, status?: EventStatus) => string {
	const agentKeyJson = repeatedJson();
	const typeJson = repeatedJson();
	const subscriptionJson = repeatedJson();
	return (event, status = "processed") => {
		const head = `{"id":"${event.id}","status":"${status}","created_at":"${event.receivedAt}","agent_key":${agentKeyJson(event.agentKey)}`;
		const tail = `"metadata":${JSON.stringify(event.metadata ?? {})},"timestamp":"${event.timestamp}","subscription_id":${subscriptionJson(event.subscriptionId)}}`;
		return event.kind === "action"
			? `${head},"action_type":${typeJson(event.type)},${tail}`
			: `${head},"outcome_type":${typeJson(event.type)},"value":${JSON.stringify(Decimal.from(event.value ?? "0").toNumber())},${tail}`;
	};
}

export function eventJson(event: StoredEvent, status: EventStatus = "processed"): string {
	return eventJsonWriter()(event, status);
}
