/**
 * The accumulator's alarm: armed by what is written (a flush soon after the first unflushed event), it copies the
 * aggregates to D1 in bounded chunks (flush.ts), archives raw events to R2 (archive.ts), reports a shard's period
 * to its head (head.ts) and, at most every `purgeEveryMs`, purges expired dedupe keys and raw events. A failure
 * re-arms it for a retry. Flushes — from the alarm, from invoicing's flush() calls, adoption's set-aside — run one
 * at a time, so an older absolute value never lands in D1 after a newer one.
 */
import { dispatchOutbox } from "../../../webhooks/dispatch";
import { hasUnarchived, purgeRawEvents } from "../storage/raw-events";
import type { FlushReport } from "../types";
import { archiveEvents } from "./archive";
import type { AccumulatorParts } from "./context";
import { faultsOf } from "./faults";
import { chunkStatements, hasUnflushed, isFull, markFlushed, readUnflushed } from "./flush";
import { reportToHead, sendThresholdRequests } from "./head";
import { refreshPrices } from "./rerate";
import { RESEND_AFTER_MS } from "./thresholds";

export class FlushSchedule {
	private flushing: Promise<unknown> = Promise.resolve();
	// True once this instance set (or saw) the alarm that will flush what it records; then recording needs no
	// storage round trip to check. The alarm handler clears it, and sets it again only if it re-arms.
	private alarmArmed = false;
	// When this instance's alarm last purged (0: never, so its first alarm does).
	private purgedAt = 0;
	// When this instance's alarm last flushed (0: never).
	private flushedAt = 0;

	/** After a write: the alarm flushes it soon, unless it is armed already. */
	async soon(parts: AccumulatorParts): Promise<void> {
		if (this.alarmArmed) return;
		const current = await parts.state.storage.getAlarm();
		const delay = this.flushDelay(parts);
		// A later alarm (a price re-check) does not flush this write soon enough: bring it forward.
		if (current === null || current > Date.now() + delay) await this.arm(parts, delay);
		else this.alarmArmed = true;
	}

	/**
	 * How long after a write its flush comes: flushDelayMs, but no sooner than busyFlushEveryMs after the alarm's
	 * last flush, so a busy accumulator flushes at that pace. A flush costs about the same for 5 events as for 50
	 * (its D1 rows are per day and type; one archive object), so this divides the flushes of a busy accumulator —
	 * its D1 writes, its R2 objects, its own time — by about three (docs/scaling.md#flush-pace). Shards other than
	 * the head keep flushDelayMs: each flush reports to the head, whose block alerts and budget holds wait on it.
	 */
	private flushDelay({ settings, store }: AccumulatorParts): number {
		const shard = store.identity()?.shard ?? null;
		if (shard !== null && shard > 0) return settings.flushDelayMs;
		return Math.max(settings.flushDelayMs, this.flushedAt + settings.busyFlushEveryMs - Date.now());
	}

	private async arm(parts: AccumulatorParts, delayMs: number): Promise<void> {
		this.alarmArmed = false;
		await parts.state.storage.setAlarm(Date.now() + delayMs);
		this.alarmArmed = true;
	}

	/** Work that must not overlap a flush (adoption's set-aside, for one). */
	serialized<T>(work: () => Promise<T>): Promise<T> {
		const run = this.flushing.then(work);
		this.flushing = run.catch(() => undefined);
		return run;
	}

	/**
	 * Copies every aggregate not yet in D1 (up to the chunk limit of one call, see FlushReport.complete), then
	 * archives the raw events not yet in R2. A failed archive is reported, not raised: invoicing, which flushes
	 * before rating, needs D1 only; the alarm retries the archive.
	 */
	flush(parts: AccumulatorParts, untilEmpty = true): Promise<FlushReport> {
		return this.serialized(async () => {
			// Prices changed since the last count re-rate what is kept here before D1 gets it (rerate.ts).
			const identity = parts.store.identity();
			if (identity !== null) await refreshPrices(parts, identity);
			const report = await flushChunks(parts, untilEmpty);
			if (report.priced > 0) await this.recheckPricesWhenStale(parts);
			const archived = await archive(parts);
			report.events = archived.events;
			report.archiveFailed = archived.failed;
			report.complete = report.complete && (archived.complete || archived.failed);
			return report;
		});
	}

	/**
	 * LLM calls just reached D1 costed at prices read up to 30 s ago. A custom price created since then looked for
	 * them in D1 before they were there, so it could not tell this accumulator: an alarm when the prices go stale
	 * reads them again and re-rates, even if no event comes (a re-rated call shows within a minute). It writes
	 * priced rows again only when something changed, so the follow-ups stop once the prices settle.
	 */
	private async recheckPricesWhenStale(parts: AccumulatorParts): Promise<void> {
		const staleAt = parts.store.prices.staleAt;
		if (staleAt <= Date.now()) return;
		const current = await parts.state.storage.getAlarm();
		if (current !== null && current <= staleAt) return;
		// Not marked armed: the next event's soon() still sees this later alarm and brings it forward.
		await parts.state.storage.setAlarm(staleAt);
	}

	async alarm(parts: AccumulatorParts): Promise<void> {
		const { store, settings } = parts;
		this.alarmArmed = false;
		this.flushedAt = Date.now();
		let failed = false;
		let thresholdsWaiting = false;
		try {
			// What is written during this flush is left to the next alarm, armed below.
			failed = (await this.flush(parts, false)).archiveFailed;
			await reportToHead(parts);
			// A threshold invoice's events are in D1 now: invoicing can bill them (thresholds.ts).
			thresholdsWaiting = await sendThresholdRequests(parts);
		} catch (error) {
			console.error(JSON.stringify({ at: "usage-accumulator.alarm", error: String(error) }));
			failed = true;
		}
		const now = Date.now();
		// Expiry is in days: purging at most every purgeEveryMs keeps the alarms of a busy accumulator (one
		// every flushDelayMs) from scanning for what is never due yet.
		if (now - this.purgedAt >= settings.purgeEveryMs) {
			this.purgedAt = now;
			store.purgeExpiredDedupeKeys(now);
			purgeRawEvents(parts.state.storage, now, settings.maxStoredBytes);
		}
		// A call recorded during the flush may have taken this running alarm for a pending one.
		this.alarmArmed = false;
		if (failed) await this.arm(parts, settings.retryDelayMs);
		else if (!store.isEmpty && (hasUnflushed(store.sql) || hasUnarchived(store.sql))) {
			await this.arm(parts, this.flushDelay(parts));
		} else if (thresholdsWaiting) {
			// Not marked armed, as for a price re-check: the next event's soon() brings this later alarm forward.
			await parts.state.storage.setAlarm(now + RESEND_AFTER_MS);
		}
	}
}

/**
 * Writes the unflushed rows to D1, a chunk at a time. `untilEmpty`: reads again after a chunk that was not full, to
 * take what was written while it was sent (invoicing's flush() calls); the alarm does not, and re-arms instead.
 */
async function flushChunks(
	{ env, state, store, settings }: AccumulatorParts,
	untilEmpty: boolean,
): Promise<FlushReport> {
	const report: FlushReport = {
		events: 0,
		aggregates: 0,
		costs: 0,
		priced: 0,
		outbox: 0,
		chunks: 0,
		complete: true,
		archiveFailed: false,
	};
	const target = store.identity();
	// Invoicing asks every accumulator of a period to flush before rating: most have nothing to write.
	if (target === null || !hasUnflushed(store.sql)) return report;
	try {
		for (;;) {
			const chunk = readUnflushed(store.sql, settings.chunk);
			const statements = chunkStatements(env.DB, target, chunk);
			if (statements.length === 0) break;
			if (report.chunks === settings.maxChunksPerCall) {
				report.complete = false;
				break;
			}
			report.chunks++;
			faultsOf(state).flush?.beforeBatch?.(report.chunks);
			await env.DB.batch(statements);
			faultsOf(state).flush?.afterBatch?.(report.chunks);
			markFlushed(store.storage, chunk);
			report.aggregates += chunk.daily.length + chunk.unbilledDaily.length;
			report.costs += chunk.costs.length + chunk.modelCosts.length;
			report.priced += chunk.modelCosts.length + chunk.unpriced.length;
			report.outbox += chunk.outbox.length;
			if (!untilEmpty && !isFull(chunk, settings.chunk)) break;
		}
	} finally {
		// Outbox rows already in D1 are delivered even when a later chunk failed.
		if (report.outbox > 0) await dispatchOutbox(env);
	}
	return report;
}

async function archive({
	env,
	state,
	store,
}: AccumulatorParts): Promise<{ events: number; complete: boolean; failed: boolean }> {
	const target = store.identity();
	if (target === null) return { events: 0, complete: true, failed: false };
	try {
		const report = await archiveEvents(
			env.EVENTS_ARCHIVE,
			store.sql,
			target,
			target.billableFrom,
			faultsOf(state).archive ?? {},
			store.recentGroups,
		);
		return { events: report.events, complete: report.complete, failed: false };
	} catch (error) {
		console.error(JSON.stringify({ at: "usage-accumulator.archive", error: String(error) }));
		return { events: 0, complete: false, failed: true };
	}
}
