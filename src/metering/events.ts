/**
 * Metering events as the API accepts and answers them (docs/metering.md#recording-events): the request schemas, with every rule that
 * can be checked without storage, and the response views.
 */
import { z } from "@hono/zod-openapi";
import { INSTANCE_KEY } from "../agents/instances";
import { isCurrencyCode } from "../lib/money";
import { isBoundedNumber, isMoneyAmount, MAX_MONEY_DECIMALS } from "../lib/numbers";
import { llmMetadataIssues } from "../model-costs/event-cost";
import { boundedNumber } from "../schemas/numbers";
import {
	EVENT_TYPE,
	MAX_BATCH_EVENTS,
	MAX_FUTURE_MS,
	MAX_METADATA_BYTES,
	MAX_METADATA_KEYS,
	MAX_PAST_MS,
} from "./event-records";

export {
	EVENT_TYPE,
	type EventStatus,
	eventJson,
	eventJsonWriter,
	eventView,
	MAX_BATCH_EVENTS,
	MAX_METADATA_BYTES,
	MAX_METADATA_KEYS,
	toMeteringEvent,
} from "./event-records";

const AgentKey = z.string().regex(INSTANCE_KEY, "must be 1–200 characters of A-Z a-z 0-9 . _ : -");
const EventType = z.string().regex(EVENT_TYPE, "must be 1–100 characters of A-Z a-z 0-9 . _ : -");
export const IdempotencyKey = z.string().min(1).max(255);

// The window is checked when the request is validated, against the time of receipt.
export const Timestamp = z.iso
	.datetime({
		offset: true,
		error: "must be an ISO 8601 date-time with an offset, e.g. 2026-11-21T10:00:00Z",
	})
	.refine(
		(s) => !(Date.parse(s) > Date.now() + MAX_FUTURE_MS),
		"must not be more than 5 minutes in the future",
	)
	.refine((s) => !(Date.parse(s) < Date.now() - MAX_PAST_MS), "must not be more than 35 days in the past")
	.openapi({ description: "Defaults to the time of receipt.", example: "2026-11-21T10:00:00Z" });

const MetadataValue = z.union([z.string(), z.number(), z.boolean(), z.null()], {
	error: "metadata values must be strings, numbers, booleans or null",
});

const Metadata = z.record(z.string().min(1).max(100), MetadataValue).superRefine((metadata, ctx) => {
	for (const [key, value] of Object.entries(metadata)) {
		if (typeof value === "number" && !isBoundedNumber(value)) {
			ctx.addIssue({
				code: "custom",
				path: [key],
				message: "must be a finite number between -1e15 and 1e15",
			});
		}
	}
	const keys = Object.keys(metadata).length;
	if (keys > MAX_METADATA_KEYS) {
		ctx.addIssue({ code: "custom", message: `must have at most ${MAX_METADATA_KEYS} keys (has ${keys})` });
	}
	const bytes = new TextEncoder().encode(JSON.stringify(metadata)).byteLength;
	if (bytes > MAX_METADATA_BYTES) {
		ctx.addIssue({ code: "custom", message: `must be at most 8 KiB as JSON (is ${bytes} bytes)` });
	}
});

/** Reserved keys of action metadata feed cost records (docs/reports.md#costs), so their types matter. */
const ActionMetadata = Metadata.superRefine((metadata, ctx) => {
	const has = (key: string) => Object.hasOwn(metadata, key);
	// cost is money: like every money input, at most 12 decimal places. (A number past the bounds is reported
	// once, above.)
	const cost = metadata.cost;
	const outOfBounds = typeof cost === "number" && !isBoundedNumber(cost);
	if (has("cost") && !outOfBounds && !isMoneyAmount(cost)) {
		ctx.addIssue({
			code: "custom",
			path: ["cost"],
			message: `cost must be a number ≥ 0 with at most ${MAX_MONEY_DECIMALS} decimal places`,
		});
	}
	const currency = metadata.cost_currency;
	if (has("cost_currency") && !(typeof currency === "string" && isCurrencyCode(currency))) {
		ctx.addIssue({
			code: "custom",
			path: ["cost_currency"],
			message: "cost_currency must be an ISO 4217 currency code in upper case",
		});
	}
	// The keys an LLM call is costed by (model prices).
	for (const issue of llmMetadataIssues(metadata)) {
		ctx.addIssue({ code: "custom", path: [issue.key], message: issue.message });
	}
	const costType = metadata.cost_type;
	if (has("cost_type") && !(typeof costType === "string" && costType.length >= 1 && costType.length <= 100)) {
		ctx.addIssue({
			code: "custom",
			path: ["cost_type"],
			message: "cost_type must be a string of 1–100 characters",
		});
	}
}).openapi({
	description:
		"At most 50 keys and 8 KiB as JSON; values are strings, numbers, booleans or null. Reserved: cost (number ≥ 0, " +
		"at most 12 decimal places), cost_currency (default USD), cost_type (default: the action_type); for an LLM " +
		"call priced by model prices, model and provider (strings) and input_tokens (uncached), cached_input_tokens, " +
		"output_tokens, reasoning_tokens (numbers ≥ 0).",
	example: { model: "gpt-4o", tokens: 1250, cost: 0.0125 },
});

export const ActionInput = z
	.strictObject({
		agent_key: AgentKey,
		action_type: EventType,
		metadata: ActionMetadata.nullable().optional(),
		timestamp: Timestamp.optional(),
		idempotency_key: IdempotencyKey.optional(),
	})
	.openapi("SendAction");
export type ActionInput = z.infer<typeof ActionInput>;

export const OutcomeInput = z
	.strictObject({
		agent_key: AgentKey,
		outcome_type: EventType,
		value: boundedNumber()
			.min(0)
			.openapi({ description: "A count or an amount; finite, 0 to 1e15.", example: 1 }),
		metadata: Metadata.nullable().optional(),
		timestamp: Timestamp.optional(),
		idempotency_key: IdempotencyKey.optional(),
	})
	.openapi("SendOutcome");
export type OutcomeInput = z.infer<typeof OutcomeInput>;

export const ActionBatchInput = z
	.strictObject({ events: z.array(ActionInput).min(1).max(MAX_BATCH_EVENTS) })
	.openapi("SendActionBatch");
export const OutcomeBatchInput = z
	.strictObject({ events: z.array(OutcomeInput).min(1).max(MAX_BATCH_EVENTS) })
	.openapi("SendOutcomeBatch");

const eventFields = {
	id: z.string(),
	status: z.enum(["processed", "duplicate"]),
	created_at: z.string(),
	agent_key: z.string(),
	metadata: z.record(z.string(), MetadataValue),
	timestamp: z.string(),
	subscription_id: z.string().nullable(),
};

export const ActionEvent = z
	.object({ ...eventFields, action_type: z.string() })
	.openapi("ActionEvent", { description: "status is always processed outside batches." });
export const OutcomeEvent = z
	.object({ ...eventFields, outcome_type: z.string(), value: z.number() })
	.openapi("OutcomeEvent", { description: "status is always processed outside batches." });
