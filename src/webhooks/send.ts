import { judgeReceiverUrl } from "./receiver-url";
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

export interface AttemptOutcome {
	delivered: boolean;
	/** The receiver asked us to stop (410 Gone): the endpoint gets disabled. */
	gone: boolean;
	statusCode: number | null;
	error: string | null;
	durationMs: number;
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
	target: { url: string; secret: string },
	event: StoredEvent,
	timeoutMs: number = ATTEMPT_TIMEOUT_MS,
): Promise<AttemptOutcome> {
	const body = envelopeBody(event);
	const started = Date.now();
	const verdict = judgeReceiverUrl(target.url);
	if (!verdict.ok) {
		return {
			delivered: false,
			gone: false,
			statusCode: null,
			error: `Not sent: ${verdict.reason} Change the endpoint's url.`.slice(0, 500),
			durationMs: 0,
		};
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
			error: delivered ? null : `The receiver answered HTTP ${response.status}.`,
			durationMs: Date.now() - started,
		};
	} catch (error) {
		const name = (error as Error)?.name;
		const message =
			name === "TimeoutError" || name === "AbortError"
				? `No answer within ${timeoutMs / 1000} s.`
				: `The request failed: ${(error as Error)?.message ?? String(error)}`;
		return {
			delivered: false,
			gone: false,
			statusCode: null,
			error: message.slice(0, 500),
			durationMs: Date.now() - started,
		};
	}
}
