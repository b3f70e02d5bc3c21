/**
 * Recording events for the routes of routes.ts, without zod: the calls to the accumulator, the answers written as
 * JSON, and the fast path that answers a plain body (fast-validation.ts) before the route's schemas run. The
 * ingest app (src/ingest-app.ts) answers with these alone until a body needs the schemas (docs/scaling.md#cold-start).
 */
import type { MiddlewareHandler } from "hono";
import type { EventKind } from "../durable-objects/usage-accumulator/types";
import type { AppContext, AppEnv } from "../http/context";
import { validationError } from "../lib/errors";
import { nowIso } from "../lib/time";
import { eventJson, eventJsonWriter, eventView, toMeteringEvent } from "./event-records";
import type { ActionInput, OutcomeInput } from "./events";
import { plainBatch, plainEvent } from "./fast-validation";
import { recordEvents } from "./record";

export async function sendOne(
	c: AppContext,
	kind: EventKind,
	input: ActionInput | OutcomeInput,
	header?: string,
) {
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

export async function sendBatch(
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
export function batchView({ recorded, processed, duplicates }: SentBatch) {
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

export const plainEventFastPath = (kind: EventKind) =>
	plainBodyFastPath(
		(body, header) => plainEvent(kind, body, header),
		async (c, event, header) => {
			const sent = await sendOne(c, kind, event, header);
			return { body: eventJson(sent.event), status: sent.status };
		},
	);

export const plainBatchFastPath = (kind: EventKind) =>
	plainBodyFastPath(
		(body, header) => plainBatch(kind, body, header),
		async (c, events, header) => {
			const sent = await sendBatch(c, kind, events, header);
			return { body: batchJson(sent), status: sent.status };
		},
	);
