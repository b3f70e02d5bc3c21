/**
 * POST /v1/actions, /v1/outcomes and their batches (docs/metering.md#recording-events). The generic Idempotency-Key middleware skips these
 * paths: here the header (or the body's idempotency_key) is the event's dedupe key, kept by the accumulator for
 * 35 days and more, and a repeat answers 200 with the original event.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import type { EventKind } from "../durable-objects/usage-accumulator/types";
import type { AppContext, AppEnv } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { SDK_WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { validationError } from "../lib/errors";
import { nowIso } from "../lib/time";
import {
	ActionBatchInput,
	ActionEvent,
	ActionInput,
	eventJson,
	eventJsonWriter,
	eventView,
	IdempotencyKey,
	OutcomeBatchInput,
	OutcomeEvent,
	OutcomeInput,
	toMeteringEvent,
} from "./events";
import { plainBatch, plainEvent } from "./fast-validation";
import { recordEvents } from "./record";

const IdempotencyHeader = z.object({
	"idempotency-key": IdempotencyKey.optional().openapi({
		description:
			"Dedupe key of the event (of each event of a batch, suffixed with #index), when the body has none.",
	}),
});

function batchResponse<S extends z.ZodType>(name: string, event: S) {
	return z
		.object({
			results: z.array(event),
			processed: z.number().int(),
			duplicates: z.number().int(),
		})
		.openapi(name);
}

async function sendOne(c: AppContext, kind: EventKind, input: ActionInput | OutcomeInput, header?: string) {
	// One event, two keys that disagree: which one dedupes is the client's mistake to fix, not ours to pick.
	if (input.idempotency_key !== undefined && header !== undefined && input.idempotency_key !== header) {
		throw validationError(
			"idempotency_key",
			"The body's idempotency_key and the Idempotency-Key header differ; send one, or the same in both.",
		);
	}
	const event = toMeteringEvent(kind, input, nowIso(), input.idempotency_key ?? header ?? null);
	const [recorded] = await recordEvents({ env: c.env, scope: c.get("scope"), events: [event] });
	if (!recorded) throw new Error("recordEvents returned no result");
	const replayed = recorded.status === "duplicate";
	if (replayed) c.header("Idempotent-Replayed", "true");
	return { event: recorded.event, status: replayed ? (200 as const) : (201 as const) };
}

async function sendBatch(
	c: AppContext,
	kind: EventKind,
	inputs: (ActionInput | OutcomeInput)[],
	header?: string,
) {
	const receivedAt = nowIso();
	const events = inputs.map((input, index) =>
		toMeteringEvent(kind, input, receivedAt, input.idempotency_key ?? (header ? `${header}#${index}` : null)),
	);
	const recorded = await recordEvents({ env: c.env, scope: c.get("scope"), events });
	const duplicates = recorded.filter((r) => r.status === "duplicate").length;
	const processed = recorded.length - duplicates;
	if (processed === 0) c.header("Idempotent-Replayed", "true");
	return { recorded, processed, duplicates, status: processed === 0 ? (200 as const) : (201 as const) };
}

type SentBatch = Awaited<ReturnType<typeof sendBatch>>;

/** The batch result as the zod path answers it. */
function batchView({ recorded, processed, duplicates }: SentBatch) {
	return { results: recorded.map((r) => eventView(r.event, r.status)), processed, duplicates };
}

/** JSON.stringify(batchView(sent)), written directly as the fast path answers it (eventJsonWriter). */
function batchJson({ recorded, processed, duplicates }: SentBatch): string {
	let results = "";
	const json = eventJsonWriter();
	for (const r of recorded) results += `${results === "" ? "" : ","}${json(r.event, r.status)}`;
	return `{"results":[${results}],"processed":${processed},"duplicates":${duplicates}}`;
}

/** A JSON text as the response, with the header c.json would set. */
function jsonText(c: AppContext, text: string, status: 200 | 201) {
	return c.body(text, status, { "Content-Type": "application/json" });
}

// Bodies the route's validators read as JSON: the media type application/json, with parameters at most.
const JSON_REQUEST = /^application\/json(;\s*[a-zA-Z0-9-]+=([^;]+))*$/i;

/**
 * Answers a request whose body is plain (fast-validation.ts) without running the zod schema: `plain` takes the
 * parsed body and the Idempotency-Key header and answers the input, or null. Any other body goes on to the
 * route's validators, and then to the handler.
 */
function plainBodyFastPath<T>(
	plain: (body: unknown, header: string | undefined) => T | null,
	send: (c: AppContext, input: T, header: string | undefined) => Promise<{ body: string; status: 200 | 201 }>,
): MiddlewareHandler<AppEnv> {
	return async (c, next) => {
		if (!JSON_REQUEST.test(c.req.header("Content-Type") ?? "")) return next();
		const header = c.req.header("Idempotency-Key");
		let input: T | null;
		try {
			input = plain(c.get("parsedBody")?.value ?? (await c.req.json()), header);
		} catch {
			return next();
		}
		if (input === null) return next();
		const { body, status } = await send(c, input, header);
		return jsonText(c, body, status);
	};
}

const plainEventFastPath = (kind: EventKind) =>
	plainBodyFastPath(
		(body, header) => plainEvent(kind, body, header),
		async (c, event, header) => {
			const sent = await sendOne(c, kind, event, header);
			return { body: eventJson(sent.event), status: sent.status };
		},
	);

const plainBatchFastPath = (kind: EventKind) =>
	plainBodyFastPath(
		(body, header) => plainBatch(kind, body, header),
		async (c, events, header) => {
			const sent = await sendBatch(c, kind, events, header);
			return { body: batchJson(sent), status: sent.status };
		},
	);

export const meteringRoutes = apiRouter();

meteringRoutes.openapi(
	createRoute({
		access: SDK_WRITE,
		method: "post",
		path: "/actions",
		operationId: "sendAction",
		tags: ["Metering"],
		summary: "Send an action",
		middleware: [plainEventFastPath("action")] as const,
		request: { headers: IdempotencyHeader, body: { required: true, ...json(ActionInput) } },
		responses: {
			200: {
				description: "A repeat of an idempotency key: the original event (Idempotent-Replayed: true)",
				...json(ActionEvent),
			},
			201: { description: "Recorded and counted", ...json(ActionEvent) },
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		const { event, status } = await sendOne(
			c,
			"action",
			c.req.valid("json"),
			c.req.valid("header")["idempotency-key"],
		);
		return c.json(eventView(event) as z.infer<typeof ActionEvent>, status);
	},
);

meteringRoutes.openapi(
	createRoute({
		access: SDK_WRITE,
		method: "post",
		path: "/outcomes",
		operationId: "sendOutcome",
		tags: ["Metering"],
		summary: "Send an outcome",
		description: "Emits outcome.completed.",
		middleware: [plainEventFastPath("outcome")] as const,
		request: { headers: IdempotencyHeader, body: { required: true, ...json(OutcomeInput) } },
		responses: {
			200: {
				description: "A repeat of an idempotency key: the original event (Idempotent-Replayed: true)",
				...json(OutcomeEvent),
			},
			201: { description: "Recorded and counted", ...json(OutcomeEvent) },
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		const { event, status } = await sendOne(
			c,
			"outcome",
			c.req.valid("json"),
			c.req.valid("header")["idempotency-key"],
		);
		return c.json(eventView(event) as z.infer<typeof OutcomeEvent>, status);
	},
);

const ActionBatchResult = batchResponse("ActionBatchResult", ActionEvent);
const OutcomeBatchResult = batchResponse("OutcomeBatchResult", OutcomeEvent);

meteringRoutes.openapi(
	createRoute({
		access: SDK_WRITE,
		method: "post",
		path: "/actions/batch",
		operationId: "sendActionBatch",
		tags: ["Metering"],
		summary: "Send up to 1,000 actions",
		description: "All events are validated first; if any is invalid, nothing is stored.",
		middleware: [plainBatchFastPath("action")] as const,
		request: { headers: IdempotencyHeader, body: { required: true, ...json(ActionBatchInput) } },
		responses: {
			200: { description: "Every event was a duplicate", ...json(ActionBatchResult) },
			201: { description: "At least one event was new", ...json(ActionBatchResult) },
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		const header = c.req.valid("header")["idempotency-key"];
		const sent = await sendBatch(c, "action", c.req.valid("json").events, header);
		return c.json(batchView(sent) as z.infer<typeof ActionBatchResult>, sent.status);
	},
);

meteringRoutes.openapi(
	createRoute({
		access: SDK_WRITE,
		method: "post",
		path: "/outcomes/batch",
		operationId: "sendOutcomeBatch",
		tags: ["Metering"],
		summary: "Send up to 1,000 outcomes",
		description:
			"All events are validated first; if any is invalid, nothing is stored. Emits outcome.completed for each new outcome.",
		middleware: [plainBatchFastPath("outcome")] as const,
		request: { headers: IdempotencyHeader, body: { required: true, ...json(OutcomeBatchInput) } },
		responses: {
			200: { description: "Every event was a duplicate", ...json(OutcomeBatchResult) },
			201: { description: "At least one event was new", ...json(OutcomeBatchResult) },
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		const header = c.req.valid("header")["idempotency-key"];
		const sent = await sendBatch(c, "outcome", c.req.valid("json").events, header);
		return c.json(batchView(sent) as z.infer<typeof OutcomeBatchResult>, sent.status);
	},
);
