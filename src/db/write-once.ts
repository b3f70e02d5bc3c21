/**
 * A write and the answer of its Idempotency-Key commit together (docs/conventions.md#the-idempotency-key-header).
 * http/idempotency.ts claims the key before the route runs; a domain verb that moves money or numbers a document
 * puts `mark.statements(d1, ids)` into its own D1 batch, which marks the key's record `committed` with the ids it
 * wrote. So when the Worker dies after that batch, the repeat finds what was done instead of a claim to abandon,
 * and answers it rather than doing it again.
 *
 * The mark only updates the record this request claimed (its claim id). When a repeat took the key over meanwhile
 * (the first request was taken for dead after 60 seconds), the update changes nothing and the guard after it rolls
 * the whole write back: of two requests with one key, one write at most is stored.
 */
import { derivedId } from "../lib/derived-id";
import { type IdPrefix, newId } from "../lib/ids";
import { sha256Hex } from "../lib/sha256";

/** The key a request claimed: its record's primary key, the claim's own id and its request's hash. */
export interface IdempotencyClaim {
	environment: string;
	keyId: string;
	method: string;
	path: string;
	key: string;
	claimId: string;
	/** SHA-256 of the request's parsed JSON, as the record keeps it. */
	requestHash: string;
	/** When the first request under this key claimed it (ms): kept when a repeat takes the key over. */
	firstClaimedAt: number;
}

/**
 * The same for every request under one Idempotency-Key (environment, calling key, method, path and key), and
 * for no other: what a write outside D1 keeps so that a repeat finds it (reservations in their accumulator), or
 * what names a call to another service so that it answers a repeat once (Stripe's Idempotency-Key of a refund).
 */
export function claimDigest(claim: IdempotencyClaim): string {
	return sha256Hex(JSON.stringify([claim.environment, claim.keyId, claim.method, claim.path, claim.key]));
}

/** What a domain verb is handed to make its write and the key's record one batch; absent without a key. */
export interface WriteMark {
	/** Statements to add to the write's batch: they record `ids` (appended to earlier ones) under the key. */
	statements(d1: D1Database, ids: readonly string[]): D1PreparedStatement[];
	/**
	 * An id that every request under this key gets alike (sortable by the first request's time): a write that
	 * calls another service before its batch names what it asks by it, so a repeat after a crash between the
	 * call and the batch asks the same (Stripe then answers the refund it made instead of refunding again).
	 */
	idFor(prefix: IdPrefix): string;
}

const CLAIM_LOST = "idempotency-claim-lost";

export function writeMark(claim: IdempotencyClaim): WriteMark {
	return {
		idFor: (prefix) => derivedId(prefix, claim.firstClaimedAt, `${prefix}:${claimDigest(claim)}`),
		statements: (d1, ids) => [
			d1
				.prepare(
					`UPDATE idempotency_records SET state = 'committed', resources = CASE
						WHEN resources IS NULL OR resources = '[]' THEN ?7
						WHEN ?7 = '[]' THEN resources
						ELSE substr(resources, 1, length(resources) - 1) || ',' || substr(?7, 2) END
					WHERE environment = ?1 AND key_id = ?2 AND method = ?3 AND path = ?4 AND key = ?5 AND claim_id = ?6
						AND state IN ('in_progress', 'committed')`,
				)
				.bind(
					claim.environment,
					claim.keyId,
					claim.method,
					claim.path,
					claim.key,
					claim.claimId,
					JSON.stringify(ids),
				),
			// A JSON path error names its path, so this abort is told apart from the stale-write guard's.
			d1.prepare(`SELECT CASE WHEN changes() = 0 THEN json_extract('{}', '${CLAIM_LOST}') END`),
		],
	};
}

/** The batch was rolled back because another request took this one's Idempotency-Key over. */
export function isClaimLost(error: unknown): boolean {
	const text = String((error as { cause?: unknown })?.cause ?? "") + String(error);
	return text.includes(CLAIM_LOST);
}

/** The id of an optional mark (see WriteMark.idFor), a fresh one without an Idempotency-Key. */
export function idOnce(mark: WriteMark | undefined, prefix: IdPrefix): string {
	return mark === undefined ? newId(prefix) : mark.idFor(prefix);
}

/** The statements of an optional mark: none without an Idempotency-Key. */
export function markStatements(
	mark: WriteMark | undefined,
	d1: D1Database,
	ids: readonly string[],
): D1PreparedStatement[] {
	return mark === undefined ? [] : mark.statements(d1, ids);
}
