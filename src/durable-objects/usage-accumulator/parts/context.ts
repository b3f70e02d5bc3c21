/**
 * What the parts of an accumulator share (object.ts hands it to each call): its storage and the books it keeps
 * in memory over it, its settings, and the two steps several parts start — a flush soon, a handover.
 */
import type { Env } from "../../../env";
import { type ChunkLimits, DEFAULT_CHUNK_LIMITS } from "../storage/event-rows";
import { RAW_EVENTS_MAX_BYTES } from "../storage/raw-events";
import type { AccumulatorStore } from "../storage/store";
import type { Handover } from "../types";
import type { AlertBook } from "./alert-book";
import type { PlanBook } from "./period-plans";

export interface AccumulatorSettings {
	/** How long after the first unflushed event the alarm copies to D1. */
	flushDelayMs: number;
	/** The least time between two flushes of the alarm, except in shards other than the head (alarm.ts). */
	busyFlushEveryMs: number;
	/** After a failed flush. */
	retryDelayMs: number;
	chunk: ChunkLimits;
	/** D1 batches per alarm or flush() call; the rest waits for the next one. */
	maxChunksPerCall: number;
	/** Storage above which archived raw events go before their time (raw-events.ts). */
	maxStoredBytes: number;
	/** Alarms purge expired dedupe keys and raw events at most this often (and the first alarm of an instance). */
	purgeEveryMs: number;
}

export const DEFAULT_ACCUMULATOR_SETTINGS: AccumulatorSettings = {
	flushDelayMs: 1_500,
	busyFlushEveryMs: 5_000,
	retryDelayMs: 10_000,
	chunk: DEFAULT_CHUNK_LIMITS,
	maxChunksPerCall: 20,
	maxStoredBytes: RAW_EVENTS_MAX_BYTES,
	purgeEveryMs: 60_000,
};

export interface AccumulatorParts {
	env: Env;
	state: DurableObjectState;
	store: AccumulatorStore;
	plans: PlanBook;
	alerts: AlertBook;
	settings: AccumulatorSettings;
	/** Arms the alarm that flushes what was just written, unless it is armed already (alarm.ts). */
	flushSoon: () => Promise<void>;
	/** Takes an instance over from its earlier holders, once at a time per instance and generation (handover.ts). */
	takeOver: (name: string, handover: Handover) => Promise<void>;
}
