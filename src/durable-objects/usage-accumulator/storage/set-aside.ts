/**
 * The tables of an adoption (parts/adoption.ts): the events an instance's accumulator set aside for a
 * subscription, and in the subscription's accumulator the last event id it absorbed per instance.
 */
import type { EventRow } from "./event-rows";

/** Set-aside events are kept as long as raw events (36 days), for repeats of a driver that failed. */
const SET_ASIDE_RETENTION_MS = 36 * 24 * 60 * 60 * 1000;

export interface AdoptedEvent {
	row: EventRow;
	/** Whether the instance's accumulator had archived it already. */
	archived: boolean;
}

/** The last event id of `agentKey` the subscription's accumulator absorbed, or null. */
export function absorbedThrough(sql: SqlStorage, agentKey: string): string | null {
	const [row] = sql
		.exec<{ through: string }>("SELECT through FROM absorbed WHERE agent_key = ?", agentKey)
		.toArray();
	return row?.through ?? null;
}

/** Of a page, the events past the mark, in id order, and the mark to store after counting them. */
export function unabsorbed(
	sql: SqlStorage,
	agentKey: string,
	page: readonly AdoptedEvent[],
): { fresh: AdoptedEvent[]; through: string | null } {
	const mark = absorbedThrough(sql, agentKey);
	const fresh = page
		.filter((event) => mark === null || event.row[0] > mark)
		.sort((a, b) => (a.row[0] < b.row[0] ? -1 : a.row[0] > b.row[0] ? 1 : 0));
	return { fresh, through: fresh.at(-1)?.row[0] ?? null };
}

export function markAbsorbed(sql: SqlStorage, agentKey: string, through: string): void {
	sql.exec(
		`INSERT INTO absorbed (agent_key, through) VALUES (?1, ?2)
		ON CONFLICT (agent_key) DO UPDATE SET through = excluded.through WHERE excluded.through > absorbed.through`,
		agentKey,
		through,
	);
}

export function purgeSetAside(sql: SqlStorage, now: number): void {
	sql.exec("DELETE FROM set_aside WHERE at < ?", now - SET_ASIDE_RETENTION_MS);
}
