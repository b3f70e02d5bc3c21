/**
 * One request of a batch, and what its answer means for the events in it: delivered, some invalid, to retry
 * (and after how long), or refused for good. The client decides what to do; nothing here waits or loops.
 */
import type { EventKind, MeteringEvent } from "./types.js";

export type Attempt =
	| { outcome: "delivered"; processed: number; duplicates: number }
	| {
			outcome: "invalid";
			status: number;
			invalid: Map<number, { path: string; message: string }[]>;
			message: string;
	  }
	| { outcome: "retry"; status?: number; code?: string; message: string; retryAfterMs?: number }
	| { outcome: "too_large"; status: number; code?: string; message: string }
	| { outcome: "rejected"; status: number; code?: string; message: string };

interface ErrorBody {
	error?: { code?: string; message?: string; details?: { path?: string; message?: string }[] };
}

/** The wire shape of an event (CONTRACT §6). */
export function wireEvent(event: MeteringEvent): Record<string, unknown> {
	const body: Record<string, unknown> = { agent_key: event.agentKey };
	if (event.kind === "action") body.action_type = event.type;
	else {
		body.outcome_type = event.type;
		body.value = event.value;
	}
	if (event.metadata !== undefined) body.metadata = event.metadata;
	body.timestamp = event.timestamp;
	body.idempotency_key = event.idempotencyKey;
	return body;
}

/** Seconds (`Retry-After: 7`) or an HTTP date, in milliseconds from now; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
	if (header === null || header.trim() === "") return undefined;
	const value = header.trim();
	if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
	const date = Date.parse(value);
	return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

const EVENT_PATH = /^events\[(\d+)\](?:\.(.*))?$/;

export async function sendBatch(options: {
	fetch: typeof fetch;
	baseUrl: string;
	apiKey: string;
	kind: EventKind;
	events: MeteringEvent[];
	timeoutMs: number;
}): Promise<Attempt> {
	const { kind, events } = options;
	const url = `${options.baseUrl.replace(/\/+$/, "")}/v1/${kind === "action" ? "actions" : "outcomes"}/batch`;
	const controller = new AbortController();
	const timer = setTimeout(() => controller.abort(), options.timeoutMs);
	let response: Response;
	let text: string;
	try {
		response = await options.fetch(url, {
			method: "POST",
			headers: { Authorization: `Bearer ${options.apiKey}`, "Content-Type": "application/json" },
			body: JSON.stringify({ events: events.map(wireEvent) }),
			signal: controller.signal,
		});
		text = await response.text();
	} catch (error) {
		return { outcome: "retry", message: `network error: ${describe(error)}` };
	} finally {
		clearTimeout(timer);
	}
	const status = response.status;
	let body: unknown;
	try {
		body = text === "" ? undefined : JSON.parse(text);
	} catch {
		body = undefined;
	}
	if (status === 200 || status === 201) {
		const result = body as { processed?: unknown; duplicates?: unknown } | undefined;
		if (typeof result?.processed === "number" && typeof result.duplicates === "number") {
			return { outcome: "delivered", processed: result.processed, duplicates: result.duplicates };
		}
		// A success without the batch answer is not the API's (a proxy's page?): the events may not be recorded.
		return { outcome: "retry", status, message: `unexpected answer to ${status}: ${text.slice(0, 200)}` };
	}
	const error = (body as ErrorBody | undefined)?.error;
	const code = error?.code;
	const message = error?.message ?? `HTTP ${status}`;
	if (status === 400 && code === "validation_error" && error?.details) {
		const invalid = new Map<number, { path: string; message: string }[]>();
		for (const detail of error.details) {
			const match = EVENT_PATH.exec(detail.path ?? "");
			const index = match ? Number(match[1]) : Number.NaN;
			if (!(index >= 0 && index < events.length)) {
				// An error that names no event (the batch itself): nothing can be sent as it is.
				return { outcome: "rejected", status, code, message: detailMessage(detail, message) };
			}
			const list = invalid.get(index) ?? [];
			list.push({ path: match?.[2] ?? "", message: detail.message ?? message });
			invalid.set(index, list);
		}
		if (invalid.size > 0) return { outcome: "invalid", status, invalid, message };
	}
	if (status === 413) return { outcome: "too_large", status, code, message };
	const retryable =
		status === 408 ||
		status === 429 ||
		status >= 500 ||
		(status === 409 && code === "idempotency_key_in_use");
	if (retryable) {
		return {
			outcome: "retry",
			status,
			code,
			message,
			retryAfterMs: parseRetryAfter(response.headers.get("Retry-After")),
		};
	}
	return { outcome: "rejected", status, code, message };
}

function detailMessage(detail: { path?: string; message?: string }, fallback: string): string {
	return detail.path ? `${detail.path}: ${detail.message ?? fallback}` : (detail.message ?? fallback);
}

function describe(error: unknown): string {
	if (error instanceof Error) {
		const cause = (error as { cause?: unknown }).cause;
		return cause instanceof Error ? `${error.message} (${cause.message})` : error.message;
	}
	return String(error);
}
