/**
 * Older pages of the event explorer (docs/metering.md#the-event-explorer): what the accumulators no longer keep, read from the R2 archive.
 *
 * An accumulator keeps every event it counted with a timestamp after its `retainedAfter` (raw-events.ts); older
 * ones may be only in the archive. So a page is the merge of the accumulators' pages and of the archived events
 * each accumulator may have dropped (timestamp ≤ its retainedAfter), deduplicated by id (an event still kept and
 * already archived is one event), in one total order: newest timestamp first, then id. The cursor is the last
 * event of a page, a position in that order whichever store served it, so the seam between accumulator and
 * archive neither repeats nor skips an event.
 *
 * What is read: D1's daily aggregates (`usage_daily`, per accumulator, day, instance, kind and type) name the days
 * and accumulators holding matching events, so days and accumulators without any cost nothing. A day is listed
 * per accumulator (`events/<env>/<day>/<accumulator>/`); each object's custom metadata gives the time range of its
 * events, so objects are opened newest first and only while they can still hold an event of the page. An event is
 * final once no unread object can hold a newer one. After MAX_ARCHIVE_REQUESTS R2 requests a page stops with the
 * events that are final (fewer than `limit`, with a next_cursor); it reads on only while none is.
 */
import type { Scope } from "../db/scope";
import {
	ARCHIVE_MAX_TS,
	ARCHIVE_MIN_TS,
	type EventView,
} from "../durable-objects/usage-accumulator/parts/archive";
import { unbilledAccumulatorName } from "../durable-objects/usage-accumulator/parts/flush";
import type { Env } from "../env";
import { DomainError } from "../lib/errors";
import type { EventQuery } from "./explorer";
import { newestFirstView } from "./views";

const UNBILLED_SUFFIX = unbilledAccumulatorName("");

/** R2 requests (lists and reads) a page makes before it settles for the events already final. */
export const MAX_ARCHIVE_REQUESTS = 12;
/** Days with matching events fetched from D1 at a time. */
const DAYS_PER_QUERY = 16;

/** The explorer's query, its cursor decoded. */
export interface ArchiveQuery extends Omit<EventQuery, "cursor"> {
	/** The last event of the previous page. */
	before: { timestamp: string; id: string } | null;
	/** The accumulators read, each with the instant after which it keeps every event it counted. */
	retainedAfter: ReadonlyMap<string, string>;
}

export interface ArchivePage {
	events: EventView[];
	/** Whether events may follow the page. */
	more: boolean;
}

interface ArchiveDay {
	day: string;
	accumulators: string[];
	/** The newest timestamp this day may add to the page. */
	newest: string;
}

interface ArchiveObject {
	key: string;
	accumulator: string;
	/** The newest timestamp this object may add to the page. */
	newest: string;
}

const archiveUnavailable = () =>
	new DomainError(
		"internal_error",
		"The events archive could not be read for this page; retry the request (with the same cursor).",
	);

/** Completes a page from the archive, given the accumulators' own pages (`live`, each `limit + 1` long). */
export async function pageWithArchive(
	env: Env,
	scope: Scope,
	query: ArchiveQuery,
	live: readonly EventView[],
): Promise<ArchivePage> {
	const walk = new ArchiveWalk(env, scope, query);
	const byId = new Map(live.map((event) => [event.id, event]));
	for (;;) {
		const frontier = await walk.frontier();
		const sorted = [...byId.values()].sort(newestFirstView);
		const final = frontier === null ? sorted : newerThan(sorted, frontier);
		if (
			frontier === null ||
			final.length > query.limit ||
			(walk.requests >= MAX_ARCHIVE_REQUESTS && final.length > 0)
		) {
			return { events: final.slice(0, query.limit), more: final.length > query.limit || frontier !== null };
		}
		for (const event of await walk.step()) if (!byId.has(event.id)) byId.set(event.id, event);
	}
}

/** The leading events of a newest-first list whose timestamp is after `instant`. */
export function newerThan(sorted: readonly EventView[], instant: string): EventView[] {
	const end = sorted.findIndex((event) => event.timestamp <= instant);
	return end === -1 ? [...sorted] : sorted.slice(0, end);
}

/** The archive of a query, walked newest first: days from D1, then their objects from R2. */
class ArchiveWalk {
	requests = 0;
	private readonly days: ArchiveDay[] = [];
	private readonly objects: ArchiveObject[] = [];
	private moreDays = true;
	/** Days not yet fetched from D1 are before this one (exclusive); "~" sorts after every day. */
	private belowDay = "~";
	/** The newest timestamp any archived event of the page may have. */
	private readonly ceiling: string;

	constructor(
		private readonly env: Env,
		private readonly scope: Scope,
		private readonly query: ArchiveQuery,
	) {
		let ceiling = latest(query.retainedAfter.values());
		if (query.before !== null && query.before.timestamp < ceiling) ceiling = query.before.timestamp;
		if (query.to < ceiling) ceiling = query.to;
		this.ceiling = ceiling;
	}

	/** The newest timestamp an unread part of the archive may hold; null once nothing is left to read. */
	async frontier(): Promise<string | null> {
		while (this.days.length === 0 && this.moreDays) await this.fetchDays();
		let newest: string | null = null;
		const object = this.objects[0];
		const day = this.days[0];
		if (object !== undefined) newest = object.newest;
		if (day !== undefined && (newest === null || day.newest > newest)) newest = day.newest;
		return newest === null || newest < this.ceiling ? newest : this.ceiling;
	}

	/** Opens the newest unread object, or lists the next day when it may hold newer events. */
	async step(): Promise<EventView[]> {
		const day = this.days[0];
		const object = this.objects[0];
		if (day !== undefined && (object === undefined || day.newest >= object.newest)) {
			this.days.shift();
			await Promise.all(day.accumulators.map((accumulator) => this.list(day.day, accumulator)));
			this.objects.sort((a, b) => (a.newest < b.newest ? 1 : a.newest > b.newest ? -1 : 0));
			return [];
		}
		if (object === undefined) return [];
		this.objects.shift();
		return await this.read(object);
	}

	private async fetchDays(): Promise<void> {
		const { query } = this;
		// A subscription's accumulator has rows of its own for events from before its start (flush.ts): they name
		// days of its archive too.
		const names = [...query.retainedAfter.keys()];
		const accumulators = JSON.stringify([...names, ...names.map(unbilledAccumulatorName)]);
		const bindings: (string | number)[] = [this.scope.environment, accumulators];
		let filters = "";
		const filter = (column: string, value: string | undefined) => {
			if (value === undefined) return;
			bindings.push(value);
			filters += ` AND ${column} = ?${bindings.length}`;
		};
		// No filter on subscription_id: the accumulators asked are the subscription's already, and its rows of events
		// from before its start have none.
		filter("agent_key", query.agentKey);
		filter("kind", query.kind);
		filter("type", query.type);
		const matching = `environment = ?1 AND field = '' AND accumulator IN (SELECT value FROM json_each(?2))${filters}`;
		bindings.push(query.from.slice(0, 10), this.ceiling.slice(0, 10), this.belowDay, DAYS_PER_QUERY);
		const n = bindings.length;
		const { results } = await this.env.DB.prepare(
			// A split day's later rows are keyed by the split's instant (lib/day-keys.ts): the day is its first 10 characters.
			`SELECT DISTINCT substr(day, 1, 10) AS day, accumulator FROM usage_daily WHERE ${matching}
				AND substr(day, 1, 10) IN (
				SELECT DISTINCT substr(day, 1, 10) FROM usage_daily WHERE ${matching}
				AND day >= ?${n - 3} AND day <= ?${n - 2} || '~' AND day < ?${n - 1} ORDER BY 1 DESC LIMIT ?${n})
			ORDER BY day DESC`,
		)
			.bind(...bindings)
			.all<{ day: string; accumulator: string }>();
		const byDay = new Map<string, string[]>();
		for (const row of results) {
			const day = row.day;
			const accumulator = row.accumulator.endsWith(UNBILLED_SUFFIX)
				? row.accumulator.slice(0, -UNBILLED_SUFFIX.length)
				: row.accumulator;
			// An accumulator keeps every event after its retainedAfter: its later days need no archive.
			const retainedAfter = query.retainedAfter.get(accumulator);
			if (retainedAfter === undefined || day > retainedAfter.slice(0, 10)) continue;
			const listed = byDay.get(day) ?? [];
			if (!listed.includes(accumulator)) byDay.set(day, [...listed, accumulator]);
		}
		const days = new Set(results.map((row) => row.day));
		this.moreDays = days.size === DAYS_PER_QUERY;
		for (const day of days) if (day < this.belowDay) this.belowDay = day;
		for (const [day, accumulators] of byDay) {
			const newest = latest(
				accumulators.map((accumulator) =>
					atMost(`${day}T23:59:59.999Z`, query.retainedAfter.get(accumulator) as string),
				),
			);
			this.days.push({ day, accumulators, newest });
		}
	}

	private async list(day: string, accumulator: string): Promise<void> {
		const { query } = this;
		const retainedAfter = query.retainedAfter.get(accumulator) as string;
		const prefix = `events/${this.scope.environment}/${day}/${accumulator}/`;
		let cursor: string | undefined;
		do {
			this.requests++;
			let page: R2Objects;
			try {
				page = await this.env.EVENTS_ARCHIVE.list({ prefix, cursor, include: ["customMetadata"] });
			} catch (error) {
				console.error(JSON.stringify({ at: "events.archive-pages.list", prefix, error: String(error) }));
				throw archiveUnavailable();
			}
			for (const listed of page.objects) {
				// Objects written before their time range was recorded may hold any instant of their day.
				const oldest = listed.customMetadata?.[ARCHIVE_MIN_TS] ?? `${day}T00:00:00.000Z`;
				const newest = atMost(
					listed.customMetadata?.[ARCHIVE_MAX_TS] ?? `${day}T23:59:59.999Z`,
					retainedAfter,
				);
				const skip =
					oldest > retainedAfter || // all kept by the accumulator
					(query.before !== null && oldest > query.before.timestamp) || // all before the cursor
					newest < query.from ||
					oldest >= query.to;
				if (!skip) this.objects.push({ key: listed.key, accumulator, newest });
			}
			cursor = page.truncated ? page.cursor : undefined;
		} while (cursor !== undefined);
	}

	private async read(object: ArchiveObject): Promise<EventView[]> {
		const { query } = this;
		const retainedAfter = query.retainedAfter.get(object.accumulator) as string;
		this.requests++;
		let lines: string[];
		try {
			const stored = await this.env.EVENTS_ARCHIVE.get(object.key);
			if (stored === null) throw new Error("listed, then missing");
			const text = await new Response(stored.body.pipeThrough(new DecompressionStream("gzip"))).text();
			lines = text.split("\n").filter((line) => line !== "");
		} catch (error) {
			console.error(
				JSON.stringify({ at: "events.archive-pages.read", key: object.key, error: String(error) }),
			);
			throw archiveUnavailable();
		}
		const found: EventView[] = [];
		for (const line of lines) {
			let event: EventView;
			try {
				event = JSON.parse(line) as EventView;
			} catch {
				throw archiveUnavailable();
			}
			const at = event.timestamp;
			if (at < query.from || at >= query.to || at > retainedAfter) continue;
			const before = query.before;
			if (before !== null && (at > before.timestamp || (at === before.timestamp && event.id >= before.id)))
				continue;
			if (query.agentKey !== undefined && event.agent_key !== query.agentKey) continue;
			if (query.kind !== undefined && event.kind !== query.kind) continue;
			if (query.type !== undefined && event.type !== query.type) continue;
			found.push(event);
		}
		return found;
	}
}

/** The latest of ISO instants ("" for none). */
export function latest(instants: Iterable<string>): string {
	let found = "";
	for (const instant of instants) if (instant > found) found = instant;
	return found;
}

function atMost(instant: string, bound: string): string {
	return instant < bound ? instant : bound;
}
