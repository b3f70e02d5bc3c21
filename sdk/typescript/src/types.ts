/** What the SDK sends, reports and answers. Field names are the SDK's (camelCase); the wire uses snake_case. */

export type EventKind = "action" | "outcome";

/** Metadata values the API accepts: at most 50 keys and 8 KiB as JSON. */
export type Metadata = Record<string, string | number | boolean | null>;

export interface ActionInput {
	/** The agent instance's key (1–200 characters of A-Z a-z 0-9 . _ : -). */
	agentKey: string;
	/** e.g. `llm_call`, `tool_call`. */
	type: string;
	metadata?: Metadata;
	/** When it happened; default: when `action()` was called. A Date or an ISO 8601 string with an offset. */
	timestamp?: Date | string;
	/** Dedupe key; default: one generated for this event, unique per client. */
	idempotencyKey?: string;
}

export interface OutcomeInput extends ActionInput {
	/** A count or an amount, finite and ≥ 0. */
	value: number;
}

/** One event as the client holds it: every field decided, ready to send again and again. */
export interface MeteringEvent {
	kind: EventKind;
	agentKey: string;
	type: string;
	value?: number;
	metadata?: Metadata;
	timestamp: string;
	idempotencyKey: string;
}

export type FailureReason =
	/** The API refused these events as invalid (400 validation_error); the other events of the batch were sent. */
	| "invalid"
	/** The API refused the request for good (401, 403, 404, 413 on a single event, other 4xx). */
	| "rejected"
	/** Every retry failed (network errors, 429, 5xx). */
	| "retries_exhausted";

/** Handed to `onError`: which events were not recorded, and why. Nothing is dropped without one. */
export interface DeliveryFailure {
	reason: FailureReason;
	events: MeteringEvent[];
	/** HTTP status of the last answer; undefined after a network error. */
	status?: number;
	/** The API's error code (`validation_error`, `unauthorized`, …) when it answered one. */
	code?: string;
	message: string;
	/** For `invalid`: the API's details for these events, paths relative to the event (`metadata.cost`). */
	details?: { path: string; message: string }[];
}

/** Handed to `onDelivered` after each successful request. */
export interface DeliveryReport {
	kind: EventKind;
	events: MeteringEvent[];
	/** Events recorded now. */
	processed: number;
	/** Events the API already had (a retried request, or a repeated idempotency key): not counted again. */
	duplicates: number;
}

export interface ClientStats {
	/** Events accepted by `action()`/`outcome()` and not yet delivered or failed (waiting ones included). */
	pending: number;
	processed: number;
	duplicates: number;
	failed: number;
	/** Requests sent again after a retryable failure. */
	retries: number;
	requests: number;
}

export interface MeteringClientOptions {
	/** An SDK key (`sk_live_…` or `sk_test_…`). */
	apiKey: string;
	/** e.g. `https://metering.example.com` (without `/v1`). */
	baseUrl: string;
	/** Events per request, 1–1000. Default 500. */
	batchSize?: number;
	/** A partial batch is sent this long after its first event. Default 1000 ms. */
	flushIntervalMs?: number;
	/**
	 * Events held at most (queued and in flight). Beyond it `action()`/`outcome()` wait for room (their promises
	 * resolve later) instead of dropping anything. Default 10,000.
	 */
	maxBufferedEvents?: number;
	/** Requests in flight at once. Default 2. */
	maxConcurrentRequests?: number;
	/** Retries of one request after network errors, 408, 429 and 5xx. Default 10. */
	maxRetries?: number;
	/** First backoff; doubles with each retry, with jitter, up to `maxBackoffMs`. Default 250 ms. */
	minBackoffMs?: number;
	/** Default 30,000 ms. */
	maxBackoffMs?: number;
	/** A request without an answer after this long counts as a network error. Default 30,000 ms. */
	requestTimeoutMs?: number;
	/** Called with every event that could not be recorded. Default: `console.error`. */
	onError?: (failure: DeliveryFailure) => void;
	onDelivered?: (report: DeliveryReport) => void;
	/** Another fetch (tests, proxies). Default: the global fetch. */
	fetch?: typeof fetch;
	/** On Node, flush what is buffered when the event loop empties (`beforeExit`). Default true. */
	flushOnExit?: boolean;
}
