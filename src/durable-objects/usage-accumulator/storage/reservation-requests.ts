/**
 * The Idempotency-Key of each reservation write, kept with the hold it made or released (parts/reservations.ts):
 * the hold lives here while the key's record lives in D1, so the two cannot commit in one batch. Instead the
 * write carries its key: the row is written in the transaction that holds or releases, and a repeat of the
 * request — after a Worker died between this write and the storing of its answer in D1 — finds it and is answered
 * with that reservation instead of holding (or releasing) again. A key is kept as long as D1 keeps its answer.
 */

/** What a request's Idempotency-Key is here: its digest (db/write-once.ts claimDigest) and its body's hash. */
export interface RequestKey {
	key: string;
	hash: string;
}

const KEPT_MS = 24 * 3600_000;

export type KnownRequest = { reservationId: string } | { reused: true } | null;

/** The reservation this key's request wrote; `reused` when the key came with another body; null when none. */
export function knownRequest(sql: SqlStorage, request: RequestKey | undefined, now: number): KnownRequest {
	if (request === undefined) return null;
	const [row] = sql
		.exec<{ request_hash: string; reservation_id: string }>(
			"SELECT request_hash, reservation_id FROM reservation_requests WHERE request_key = ? AND at > ?",
			request.key,
			now - KEPT_MS,
		)
		.toArray();
	if (row === undefined) return null;
	return row.request_hash === request.hash ? { reservationId: row.reservation_id } : { reused: true };
}

/** In the transaction of the write: this key's request wrote that reservation. */
export function rememberRequest(
	sql: SqlStorage,
	request: RequestKey | undefined,
	reservationId: string,
	now: number,
): void {
	if (request === undefined) return;
	sql.exec(
		"INSERT OR REPLACE INTO reservation_requests (request_key, request_hash, reservation_id, at) VALUES (?, ?, ?, ?)",
		request.key,
		request.hash,
		reservationId,
		now,
	);
	sql.exec("DELETE FROM reservation_requests WHERE at <= ?", now - KEPT_MS);
}
