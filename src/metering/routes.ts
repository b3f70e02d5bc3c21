/**
 * POST /v1/actions, /v1/outcomes and their batches (docs/metering.md#recording-events). The generic Idempotency-Key middleware skips these
 * paths: here the header (or the body's idempotency_key) is the event's dedupe key, kept by the accumulator for
 * 35 days and more, and a repeat answers 200 with the original event.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { SDK_WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import {
	ActionBatchInput,
	ActionEvent,
	ActionInput,
	eventView,
	IdempotencyKey,
	OutcomeBatchInput,
	OutcomeEvent,
	OutcomeInput,
} from "./events";
import { batchView, plainBatchFastPath, plainEventFastPath, sendBatch, sendOne } from "./ingest-routes";

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
