import { judgeReceiverUrl, type ReceiverUrlRules } from "./receiver-url";
import { deliveryHeaders } from "./signing";

/** Each attempt may take this long, counted from the moment the request starts. */
export const ATTEMPT_TIMEOUT_MS = 30_000;

/** The stored event a delivery carries. Its body is built from stored data only, so every retry sends the same. */
export interface StoredEvent {
	id: string;
	event: string;
	createdAt: string;
	data: Record<string, unknown>;
	test: boolean;
}

/**
 * Why an attempt failed, as a fixed class: what a test send reports. The runtime's own error text never leaves the
 * service, so a send cannot be used to read how a host or port on the service's network answers.
 */
export const SEND_ERROR_CLASSES = ["timeout", "connection_failed", "tls_error", "http_status"] as const;
export type SendErrorClass = (typeof SEND_ERROR_CLASSES)[number];

export interface AttemptOutcome {
	delivered: boolean;
	/** The receiver asked us to stop (410 Gone): the endpoint gets disabled. */
	gone: boolean;
	statusCode: number | null;
	errorClass: SendErrorClass | null;
	/** For the delivery log: the class in words (a status code, a url the rules refuse), never the runtime's text. */
	error: string | null;
	durationMs: number;
}

const failedBefore = (errorClass: SendErrorClass, error: string, durationMs: number): AttemptOutcome => ({
	delivered: false,
	gone: false,
	statusCode: null,
	errorClass,
	error: error.slice(0, 500),
	durationMs,
});

/** A fetch that threw: it ran out of time, or the connection (or its TLS handshake) failed. */
function classifyThrown(error: unknown, timeoutMs: number, durationMs: number): AttemptOutcome {
	const name = (error as Error)?.name;
	if (name === "TimeoutError" || name === "AbortError") {
		return failedBefore("timeout", `No answer within ${timeoutMs / 1000} s.`, durationMs);
	}
	if (/\b(?:tls|ssl|certificate|handshake)\b/i.test(String((error as Error)?.message ?? error))) {
		return failedBefore("tls_error", "The TLS connection to the receiver failed.", durationMs);
	}
	return failedBefore("connection_failed", "Could not connect to the receiver.", durationMs);
}

export function envelopeBody(event: StoredEvent): string {
	return JSON.stringify({
		id: event.id,
		event: event.event,
		timestamp: event.createdAt,
		data: event.data,
		...(event.test ? { test: true } : {}),
	});
}

/**
 * One signed POST of an event to a receiver. Never throws: every failure is described in the outcome. A url the
 * receiver rules refuse (an endpoint stored before they existed) is not connected to at all.
 */
export async function postWebhook(
	target: { url: string; secret: string; rules: ReceiverUrlRules },
	event: StoredEvent,
	timeoutMs: number = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptOutcome> {
	const body = envelopeBody(event);
	const started = Date.now();
	const verdict = judgeReceiverUrl(target.url, target.rules);
	// Never connected: to whoever asks, the connection failed; the delivery log says why.
	if (!verdict.ok) {
		return failedBefore("connection_failed", `Not sent: ${verdict.reason} Change the endpoint's url.`, 0);
	}
	const headers = await deliveryHeaders({
		secret: target.secret,
		eventId: event.id,
		event: event.event,
		body,
		timestamp: Math.floor(started / 1000),
	});
	try {
		// Redirects are not followed: a receiver that moved must be reconfigured, not guessed at.
		const response = await fetch(target.url, {
			method: "POST",
			headers,
			body,
			redirect: "manual",
			signal: AbortSignal.timeout(timeoutMs),
		});
		await response.body?.cancel();
		const delivered = response.status >= 200 && response.status < 300;
		return {
			delivered,
			gone: response.status === 410,
			statusCode: response.status,
			errorClass: delivered ? null : "http_status",
			error: delivered ? null : `The receiver answered HTTP ${response.status}.`,
			durationMs: Date.now() - started,
		};
	} catch (error) {
		return classifyThrown(error, timeoutMs, Date.now() - started);
	}
}
