/**
 * MeteringClient: actions and outcomes buffered and sent in batches, so that an agent never waits on the network
 * and never loses or double-counts an event.
 *
 * - Every event carries an idempotency key (the caller's, or `<client id>-<n>`), so a batch sent again after a
 *   timeout or a crash of the server is answered `duplicate` for what was already recorded: never counted twice.
 * - Retries back off exponentially with jitter and wait at least what `Retry-After` says.
 * - A 400 names the invalid events: those are reported and the rest of the batch is sent again (the API stored
 *   nothing). A 413 splits the batch.
 * - The buffer is bounded: beyond `maxBufferedEvents`, `action()`/`outcome()` wait for room. Nothing is dropped;
 *   whatever cannot be recorded is handed to `onError` with the reason.
 */
import {
	createReservation,
	getReservation,
	type Reservation,
	type ReservationTransport,
	type ReserveInput,
	releaseReservation,
} from "./reservations.js";
import { sendBatch } from "./transport.js";
import type {
	ActionInput,
	ClientStats,
	DeliveryFailure,
	EventKind,
	MeteringClientOptions,
	MeteringEvent,
	OutcomeInput,
} from "./types.js";

interface Held {
	event: MeteringEvent;
	/** Flush generation: `flush()` waits for every event of its generation and before. */
	epoch: number;
	seq: number;
}

interface Waiter {
	held: Held;
	admit: () => void;
}

const MAX_BATCH = 1000;

export class MeteringClient {
	private readonly options: Required<Omit<MeteringClientOptions, "onDelivered" | "fetch">> &
		Pick<MeteringClientOptions, "onDelivered">;
	private readonly fetchFn: typeof fetch;
	private readonly clientId = randomId();
	private counter = 0;
	private seq = 0;
	private epoch = 0;
	private readonly queues: Record<EventKind, Held[]> = { action: [], outcome: [] };
	private readonly waiters: Waiter[] = [];
	/** Events queued or in flight (not the waiting ones): what the bound applies to. */
	private buffered = 0;
	private inFlight = 0;
	/** Queued events up to this seq go out even in partial batches (the interval passed, or a flush). */
	private drainSeq = 0;
	private timer: ReturnType<typeof setTimeout> | undefined;
	private readonly unsettled = new Map<number, number>();
	private flushWaiters: { epoch: number; resolve: () => void }[] = [];
	private closed = false;
	private readonly counts = { processed: 0, duplicates: 0, failed: 0, retries: 0, requests: 0 };
	private readonly exitHook: (() => void) | undefined;

	constructor(options: MeteringClientOptions) {
		if (!options?.apiKey) throw new TypeError("MeteringClient: apiKey is required");
		if (!options.baseUrl) throw new TypeError("MeteringClient: baseUrl is required");
		const batchSize = options.batchSize ?? 500;
		if (!(Number.isInteger(batchSize) && batchSize >= 1 && batchSize <= MAX_BATCH)) {
			throw new RangeError("MeteringClient: batchSize must be an integer from 1 to 1000");
		}
		this.options = {
			apiKey: options.apiKey,
			baseUrl: options.baseUrl.replace(/\/+$/, ""),
			batchSize,
			flushIntervalMs: options.flushIntervalMs ?? 1000,
			maxBufferedEvents: Math.max(batchSize, options.maxBufferedEvents ?? 10_000),
			maxConcurrentRequests: Math.max(1, options.maxConcurrentRequests ?? 2),
			maxRetries: options.maxRetries ?? 10,
			minBackoffMs: options.minBackoffMs ?? 250,
			maxBackoffMs: options.maxBackoffMs ?? 30_000,
			requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
			onError: options.onError ?? defaultOnError,
			onDelivered: options.onDelivered,
			flushOnExit: options.flushOnExit ?? true,
		};
		const fetchFn = options.fetch ?? globalThis.fetch;
		if (typeof fetchFn !== "function")
			throw new TypeError("MeteringClient: no fetch in this runtime; pass one");
		this.fetchFn = fetchFn.bind(globalThis);
		const proc = (globalThis as { process?: NodeLikeProcess }).process;
		if (this.options.flushOnExit && typeof proc?.on === "function") {
			this.exitHook = () => {
				if (this.stats.pending > 0) void this.flush();
			};
			proc.on("beforeExit", this.exitHook);
		}
	}

	/** Records an action. Resolves once the event is buffered (at once, unless the buffer is full). */
	action(input: ActionInput): Promise<void> {
		return this.enqueue(this.prepare("action", input));
	}

	/** Records an outcome. Resolves once the event is buffered (at once, unless the buffer is full). */
	outcome(input: OutcomeInput): Promise<void> {
		if (typeof input?.value !== "number" || !Number.isFinite(input.value)) {
			throw new TypeError("outcome: value must be a finite number");
		}
		return this.enqueue(this.prepare("outcome", input));
	}

	/**
	 * Holds `amount` of the instance's budget before a step (sent at once, not buffered). Rejects with
	 * BudgetExceededError when it does not fit. Send the step's event with `metadata.reservation_id` to settle it,
	 * or `release()` it when the step fails; it expires after `ttlSeconds` anyway.
	 */
	reserve(input: ReserveInput): Promise<Reservation> {
		return createReservation(this.reservationTransport, input);
	}

	/** Gives a held reservation back at once (MeteringApiError 409 conflict when it is no longer held). */
	release(reservationId: string): Promise<Reservation> {
		return releaseReservation(this.reservationTransport, reservationId);
	}

	getReservation(reservationId: string): Promise<Reservation> {
		return getReservation(this.reservationTransport, reservationId);
	}

	private get reservationTransport(): ReservationTransport {
		const { apiKey, baseUrl, requestTimeoutMs } = this.options;
		return { fetch: this.fetchFn, apiKey, baseUrl, timeoutMs: requestTimeoutMs };
	}

	/** Sends everything recorded so far and resolves when each event is recorded or reported to `onError`. */
	flush(): Promise<void> {
		const epoch = this.epoch++;
		this.drainSeq = this.seq;
		const done = new Promise<void>((resolve) => {
			this.flushWaiters.push({ epoch, resolve });
		});
		this.settleFlushes();
		this.pump();
		return done;
	}

	/** Flushes, then refuses new events. Resolves when nothing is left. */
	async shutdown(): Promise<void> {
		this.closed = true;
		await this.flush();
		if (this.timer !== undefined) clearTimeout(this.timer);
		this.timer = undefined;
		const proc = (globalThis as { process?: NodeLikeProcess }).process;
		if (this.exitHook && typeof proc?.off === "function") proc.off("beforeExit", this.exitHook);
	}

	get stats(): ClientStats {
		let pending = 0;
		for (const count of this.unsettled.values()) pending += count;
		return { pending, ...this.counts };
	}

	private prepare(kind: EventKind, input: ActionInput | OutcomeInput): MeteringEvent {
		if (this.closed) throw new Error("MeteringClient: shut down; create a new client");
		if (typeof input?.agentKey !== "string" || input.agentKey === "") {
			throw new TypeError(`${kind}: agentKey must be a non-empty string`);
		}
		if (typeof input.type !== "string" || input.type === "") {
			throw new TypeError(`${kind}: type must be a non-empty string`);
		}
		const timestamp =
			input.timestamp === undefined
				? new Date().toISOString()
				: input.timestamp instanceof Date
					? input.timestamp.toISOString()
					: input.timestamp;
		const event: MeteringEvent = {
			kind,
			agentKey: input.agentKey,
			type: input.type,
			timestamp,
			idempotencyKey: input.idempotencyKey ?? `${this.clientId}-${(++this.counter).toString(36)}`,
		};
		if (kind === "outcome") event.value = (input as OutcomeInput).value;
		if (input.metadata !== undefined) event.metadata = input.metadata;
		return event;
	}

	private enqueue(event: MeteringEvent): Promise<void> {
		const held: Held = { event, epoch: this.epoch, seq: ++this.seq };
		this.unsettled.set(held.epoch, (this.unsettled.get(held.epoch) ?? 0) + 1);
		if (this.waiters.length === 0 && this.buffered < this.options.maxBufferedEvents) {
			this.admit(held);
			return Promise.resolve();
		}
		// Back-pressure: the caller waits its turn (in order) for room in the buffer.
		return new Promise((resolve) => {
			this.waiters.push({ held, admit: resolve });
			this.pump();
		});
	}

	private admit(held: Held): void {
		this.buffered++;
		this.queues[held.event.kind].push(held);
		if (this.timer === undefined) {
			this.timer = setTimeout(() => {
				this.timer = undefined;
				this.drainSeq = Math.max(this.drainSeq, this.seq);
				this.pump();
			}, this.options.flushIntervalMs);
		}
		this.pump();
	}

	/** Starts as many requests as allowed with what is ready: full batches, or anything up to `drainSeq`. */
	private pump(): void {
		while (this.inFlight < this.options.maxConcurrentRequests) {
			const kind = this.readyKind();
			if (kind === undefined) break;
			const batch = this.queues[kind].splice(0, this.options.batchSize);
			this.inFlight++;
			void this.deliver(kind, batch).finally(() => {
				this.inFlight--;
				this.buffered -= batch.length;
				this.admitWaiters();
				this.pump();
			});
		}
		if (this.queues.action.length === 0 && this.queues.outcome.length === 0 && this.timer !== undefined) {
			clearTimeout(this.timer);
			this.timer = undefined;
		}
	}

	private readyKind(): EventKind | undefined {
		let best: EventKind | undefined;
		for (const kind of ["action", "outcome"] as const) {
			const queue = this.queues[kind];
			const head = queue[0];
			if (head === undefined) continue;
			const ready = queue.length >= this.options.batchSize || head.seq <= this.drainSeq;
			// The older head goes first, so neither kind starves the other.
			if (ready && (best === undefined || head.seq < (this.queues[best][0] as Held).seq)) best = kind;
		}
		return best;
	}

	private admitWaiters(): void {
		while (this.waiters.length > 0 && this.buffered < this.options.maxBufferedEvents) {
			const waiter = this.waiters.shift() as Waiter;
			this.admit(waiter.held);
			waiter.admit();
		}
	}

	/** Sends one batch until every event in it is recorded or reported. Never throws. */
	private async deliver(kind: EventKind, batch: Held[]): Promise<void> {
		let pending = batch;
		let retries = 0;
		try {
			while (pending.length > 0) {
				this.counts.requests++;
				const attempt = await sendBatch({
					fetch: this.fetchFn,
					baseUrl: this.options.baseUrl,
					apiKey: this.options.apiKey,
					kind,
					events: pending.map((held) => held.event),
					timeoutMs: this.options.requestTimeoutMs,
				});
				switch (attempt.outcome) {
					case "delivered": {
						this.counts.processed += attempt.processed;
						this.counts.duplicates += attempt.duplicates;
						const events = pending.map((held) => held.event);
						this.settle(pending);
						pending = [];
						this.safely(() =>
							this.options.onDelivered?.({
								kind,
								events,
								processed: attempt.processed,
								duplicates: attempt.duplicates,
							}),
						);
						break;
					}
					case "invalid": {
						// The API stored nothing: report the invalid events and send the others again.
						const rest: Held[] = [];
						pending.forEach((held, index) => {
							const details = attempt.invalid.get(index);
							if (details === undefined) rest.push(held);
							else {
								this.fail([held], {
									reason: "invalid",
									status: attempt.status,
									code: "validation_error",
									message: details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join("; "),
									details,
								});
							}
						});
						pending = rest;
						break;
					}
					case "too_large": {
						if (pending.length === 1) {
							this.fail(pending, { reason: "rejected", ...attempt });
							pending = [];
						} else {
							const half = Math.ceil(pending.length / 2);
							await this.deliverInOrder(kind, [pending.slice(0, half), pending.slice(half)]);
							pending = [];
						}
						break;
					}
					case "rejected":
						this.fail(pending, { reason: "rejected", ...attempt });
						pending = [];
						break;
					case "retry": {
						if (retries >= this.options.maxRetries) {
							this.fail(pending, {
								reason: "retries_exhausted",
								status: attempt.status,
								code: attempt.code,
								message: `gave up after ${retries + 1} attempts: ${attempt.message}`,
							});
							pending = [];
							break;
						}
						retries++;
						this.counts.retries++;
						await sleep(this.backoff(retries, attempt.retryAfterMs));
						break;
					}
				}
			}
		} catch (error) {
			// A bug or a throwing fetch polyfill: the events are still reported, never lost silently.
			this.fail(pending, { reason: "retries_exhausted", message: `unexpected error: ${String(error)}` });
		}
	}

	private async deliverInOrder(kind: EventKind, parts: Held[][]): Promise<void> {
		for (const part of parts) await this.deliver(kind, part);
	}

	/** Exponential backoff with "equal jitter", never shorter than the server's Retry-After. */
	backoff(retry: number, retryAfterMs?: number): number {
		const ceiling = Math.min(this.options.maxBackoffMs, this.options.minBackoffMs * 2 ** (retry - 1));
		const jittered = ceiling / 2 + Math.random() * (ceiling / 2);
		if (retryAfterMs === undefined) return jittered;
		// Spread the clients that were told the same instant over a little time after it.
		return retryAfterMs + Math.random() * Math.min(1000, this.options.minBackoffMs * 2);
	}

	private fail(held: Held[], failure: Omit<DeliveryFailure, "events">): void {
		if (held.length === 0) return;
		this.counts.failed += held.length;
		this.settle(held);
		const events = held.map((h) => h.event);
		this.safely(() => this.options.onError({ ...failure, events }));
	}

	private settle(held: Held[]): void {
		for (const { epoch } of held) {
			const left = (this.unsettled.get(epoch) ?? 0) - 1;
			if (left > 0) this.unsettled.set(epoch, left);
			else this.unsettled.delete(epoch);
		}
		this.settleFlushes();
	}

	private settleFlushes(): void {
		if (this.flushWaiters.length === 0) return;
		let oldest = Number.POSITIVE_INFINITY;
		for (const epoch of this.unsettled.keys()) oldest = Math.min(oldest, epoch);
		const waiting: typeof this.flushWaiters = [];
		for (const waiter of this.flushWaiters) {
			if (waiter.epoch < oldest) waiter.resolve();
			else waiting.push(waiter);
		}
		this.flushWaiters = waiting;
	}

	private safely(callback: () => void): void {
		try {
			callback();
		} catch (error) {
			console.error("MeteringClient: a callback threw", error);
		}
	}
}

interface NodeLikeProcess {
	on?: (event: string, listener: () => void) => void;
	off?: (event: string, listener: () => void) => void;
}

function defaultOnError(failure: DeliveryFailure): void {
	console.error(
		`MeteringClient: ${failure.events.length} event(s) not recorded (${failure.reason}): ${failure.message}`,
		failure.events.map((e) => e.idempotencyKey),
	);
}

function sleep(ms: number): Promise<void> {
	return new Promise((resolve) => setTimeout(resolve, ms));
}

/** 16 random characters; the Web Crypto API where there is one (Node ≥ 19, Workers, Deno, browsers). */
function randomId(): string {
	const bytes = new Uint8Array(10);
	const crypto = (globalThis as { crypto?: { getRandomValues?: (a: Uint8Array) => Uint8Array } }).crypto;
	if (typeof crypto?.getRandomValues === "function") crypto.getRandomValues(bytes);
	else for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(Math.random() * 256);
	const alphabet = "0123456789abcdefghijklmnopqrstuvwxyz";
	let id = Date.now().toString(36);
	for (const byte of bytes) id += alphabet[byte % 36];
	return id;
}
