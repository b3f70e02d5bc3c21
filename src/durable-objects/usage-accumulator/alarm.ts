/**
 * The accumulator's alarm: armed by what is written (a flush soon after the first unflushed event), it copies the
 * aggregates to D1 in bounded chunks (flush.ts), archives raw events to R2 (archive.ts), reports a shard's period
 * to its head (head.ts) and, at most every `purgeEveryMs`, purges expired dedupe keys and raw events. A failure
 * re-arms it for a retry. Flushes — from the alarm, from invoicing's flush() calls, adoption's set-aside — run one
 * at a time, so an older absolute value never lands in D1 after a newer one.
 */
import { dispatchOutbox } from "../../webhooks/dispatch";
import { archiveEvents } from "./archive";
import { faultsOf } from "./faults";
import { chunkStatements, hasUnflushed, markFlushed, readUnflushed } from "./flush";
import { reportToHead } from "./head";
import type { AccumulatorParts } from "./parts";
import { hasUnarchived, purgeRawEvents } from "./raw-events";
import { refreshPrices } from "./rerate";
import type { FlushReport } from "./types";

export class FlushSchedule {
	private flushing: Promise<unknown> = Promise.resolve();
	// True once this instance set (or saw) the alarm that will flush what it records; then recording needs no
	// storage round trip to check. The alarm handler clears it, and sets it again only if it re-arms.
	private alarmArmed = false;
	// When this instance's alarm last purged (0: never, so its first alarm does).
	private purgedAt = 0;

	/** After a write: the alarm flushes it soon, unless it is armed already. */
	async soon(parts: AccumulatorParts): Promise<void> {
		if (this.alarmArmed) return;
		const current = await parts.state.storage.getAlarm();
		// A later alarm (a price re-check) does not flush this write soon enough: bring it forward.
		if (current === null || current > Date.now() + parts.settings.flushDelayMs) {
			await this.arm(parts, parts.settings.flushDelayMs);
		} else this.alarmArmed = true;
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
	flush(parts: AccumulatorParts): Promise<FlushReport> {
		return this.serialized(async () => {
			// Prices changed since the last count re-rate what is kept here before D1 gets it (rerate.ts).
			const identity = parts.store.identity();
			if (identity !== null) await refreshPrices(parts, identity);
			const report = await flushChunks(parts);
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
		let failed = false;
		try {
			failed = (await this.flush(parts)).archiveFailed;
			await reportToHead(parts);
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
			await this.arm(parts, settings.flushDelayMs);
		}
	}
}

async function flushChunks({ env, state, store, settings }: AccumulatorParts): Promise<FlushReport> {
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
