/**
 * A fast path in front of the event and batch schemas of events.ts. zod cannot compile its checks in workerd (code
 * generation is forbidden there), so checking 1,000 events with it costs several milliseconds; most batches are
 * plain — known fields of the right types — and checking those by hand costs a fraction of that.
 *
 * The rule that keeps this safe: `plainBatch` answers events only for bodies the schemas accept, and answers
 * them as the schemas would (the same fields and values). Whenever it is unsure — and for every invalid body —
 * it answers null and the route validates with zod, which words the errors. test/metering/fast-validation
 * checks this against the schemas.
 */
import { INSTANCE_KEY } from "../agents/instance-key";
import type { EventKind } from "../durable-objects/usage-accumulator/types";
import { isCurrencyCode } from "../lib/money";
import { isBoundedNumber, isMoneyAmount } from "../lib/numbers";
import { hasValidLlmMetadata } from "../model-costs/event-cost";
import {
	EVENT_TYPE,
	isEventTimestamp,
	MAX_BATCH_EVENTS,
	MAX_METADATA_BYTES,
	MAX_METADATA_KEYS,
} from "./event-records";
import type { ActionInput, OutcomeInput } from "./events";

const ACTION_FIELDS = new Set(["agent_key", "action_type", "metadata", "timestamp", "idempotency_key"]);
const OUTCOME_FIELDS = new Set([
	"agent_key",
	"outcome_type",
	"value",
	"metadata",
	"timestamp",
	"idempotency_key",
]);

type Json = Record<string, unknown>;

function isPlainObject(value: unknown): value is Json {
	return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isIdempotencyKey(value: unknown): boolean {
	return typeof value === "string" && value.length >= 1 && value.length <= 255;
}

// A JSON number within the bounds of isBoundedNumber is at most this many characters ("-0.0000012345678901234567").
const NUMBER_CHARS = 25;

function isMetadata(value: unknown, kind: EventKind): boolean {
	if (value === undefined || value === null) return true;
	if (!isPlainObject(value)) return false;
	let keys = 0;
	// The text's length before escaping: braces, and per key its quotes, colon and comma.
	let chars = 2;
	for (const key in value) {
		// A record of zod assigns each key to a fresh object, where "__proto__" would not become a key.
		if (key.length < 1 || key.length > 100 || key === "__proto__") return false;
		const item = value[key];
		if (typeof item === "number" ? !isBoundedNumber(item) : !isMetadataScalar(item)) return false;
		chars += key.length + 4 + (typeof item === "string" ? item.length + 2 : NUMBER_CHARS);
		keys++;
	}
	if (keys > MAX_METADATA_KEYS) return false;
	// A character takes at most 6 bytes as JSON (an escape like \u0001; UTF-8 needs at most 3), so most metadata
	// is small enough without being serialized to be measured.
	if (chars * 6 > MAX_METADATA_BYTES) {
		const json = JSON.stringify(value);
		// UTF-8 takes at most 3 bytes per UTF-16 unit, so short text needs no encoding to be measured.
		if (
			json.length * 3 > MAX_METADATA_BYTES &&
			new TextEncoder().encode(json).byteLength > MAX_METADATA_BYTES
		) {
			return false;
		}
	}
	return kind === "outcome" || hasValidReservedKeys(value);
}

function isMetadataScalar(value: unknown): boolean {
	return value === null || typeof value === "string" || typeof value === "boolean";
}

function hasValidReservedKeys(metadata: Json): boolean {
	const { cost, cost_currency: currency, cost_type: costType } = metadata;
	if (Object.hasOwn(metadata, "cost") && !isMoneyAmount(cost)) return false;
	if (
		Object.hasOwn(metadata, "cost_currency") &&
		!(typeof currency === "string" && isCurrencyCode(currency))
	) {
		return false;
	}
	if (
		Object.hasOwn(metadata, "cost_type") &&
		!(typeof costType === "string" && costType.length >= 1 && costType.length <= 100)
	) {
		return false;
	}
	return hasValidLlmMetadata(metadata);
}

function isPlainEvent(event: unknown, kind: EventKind): event is Json {
	if (!isPlainObject(event)) return false;
	const fields = kind === "action" ? ACTION_FIELDS : OUTCOME_FIELDS;
	for (const key in event) if (!fields.has(key)) return false;
	const type = kind === "action" ? event.action_type : event.outcome_type;
	if (typeof event.agent_key !== "string" || !INSTANCE_KEY.test(event.agent_key)) return false;
	if (typeof type !== "string" || !EVENT_TYPE.test(type)) return false;
	if (kind === "outcome" && !(isBoundedNumber(event.value) && event.value >= 0)) {
		return false;
	}
	if (event.idempotency_key !== undefined && !isIdempotencyKey(event.idempotency_key)) return false;
	if (event.timestamp !== undefined && !isEventTimestamp(event.timestamp)) return false;
	return isMetadata(event.metadata, kind);
}

/**
 * The events of a batch body (`{events: [...]}`) when the batch schema of `kind` accepts it, or null: then
 * validate it with the schema. `header` is the Idempotency-Key header, which the route validates too.
 */
export function plainBatch(
	kind: EventKind,
	body: unknown,
	header: string | undefined,
): (ActionInput | OutcomeInput)[] | null {
	if (header !== undefined && !isIdempotencyKey(header)) return null;
	if (!isPlainObject(body)) return null;
	for (const key in body) if (key !== "events") return null;
	const { events } = body;
	if (!Array.isArray(events) || events.length < 1 || events.length > MAX_BATCH_EVENTS) return null;
	for (const event of events) if (!isPlainEvent(event, kind)) return null;
	return events as (ActionInput | OutcomeInput)[];
}

/** The event of a single-event body when the schema of `kind` accepts it, or null (as plainBatch). */
export function plainEvent(
	kind: EventKind,
	body: unknown,
	header: string | undefined,
): ActionInput | OutcomeInput | null {
	if (header !== undefined && !isIdempotencyKey(header)) return null;
	return isPlainEvent(body, kind) ? (body as ActionInput | OutcomeInput) : null;
}
