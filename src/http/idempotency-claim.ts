/**
 * The claim of an Idempotency-Key and the replay of its answer (idempotency.ts decides when a request has one):
 * apart, so that a request without the header never loads the records' table (docs/scaling.md#cold-start).
 */
import { and, eq, lt } from "drizzle-orm";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { database } from "../db/client";
import { idempotencyRecords } from "../db/schema";
import type { IdempotencyClaim } from "../db/write-once";
import { canonicalJson } from "../lib/json";
import { sha256Hex } from "../lib/sha256";
import { ApiError } from "./api-error";
import type { AppContext } from "./context";
import { idempotencyFaults } from "./idempotency-faults";

const TTL_MS = 24 * 60 * 60 * 1000;
/** A first request still in progress after this long is taken as dead (its Worker was killed): docs/conventions.md#the-idempotency-key-header. */
export const ABANDONED_AFTER_MS = 60 * 1000;

/** Claims `key` for this request, or answers the stored response; runs the request and stores its answer. */
export async function claimThenAnswer(c: AppContext, next: () => Promise<void>, key: string) {
	const db = database(c.env.DB);
	const id = {
		environment: c.get("scope").environment,
		keyId: c.get("principal").keyId,
		method: c.req.method,
		path: c.req.path,
		key,
	};
	const where = and(
		eq(idempotencyRecords.environment, id.environment),
		eq(idempotencyRecords.keyId, id.keyId),
		eq(idempotencyRecords.method, id.method),
		eq(idempotencyRecords.path, id.path),
		eq(idempotencyRecords.key, id.key),
	);
	const requestHash = sha256Hex(canonicalJson(c.get("parsedBody")?.value ?? {}));
	const started = Date.now();
	const now = new Date(started).toISOString();
	const claimId = crypto.randomUUID();
	const ours = and(where, eq(idempotencyRecords.claimId, claimId));
	let firstClaimedAt = started;

	const [, claimed] = await db.batch([
		db.delete(idempotencyRecords).where(and(where, lt(idempotencyRecords.expiresAt, now))),
		db
			.insert(idempotencyRecords)
			.values({
				...id,
				requestHash,
				claimId,
				state: "in_progress",
				createdAt: now,
				expiresAt: new Date(started + TTL_MS).toISOString(),
			})
			.onConflictDoNothing()
			.returning({ key: idempotencyRecords.key }),
	]);
	if (claimed.length === 0) {
		const [existing] = await db.select().from(idempotencyRecords).where(where);
		const abandoned =
			existing?.state === "in_progress" &&
			existing.createdAt < new Date(started - ABANDONED_AFTER_MS).toISOString();
		if (!existing) throw inUse();
		if (existing.requestHash !== requestHash && !abandoned) {
			throw new ApiError(
				"idempotency_key_reused",
				"This Idempotency-Key was used with a different request body.",
			);
		}
		if (existing.state === "completed") {
			c.header("Idempotent-Replayed", "true");
			c.header("Content-Type", "application/json");
			return c.body(existing.responseBody ?? "", (existing.statusCode ?? 200) as ContentfulStatusCode);
		}
		if (existing.state === "in_progress" && !abandoned) throw inUse();
		// Taken over: a dead first request that stored nothing, or one that stored its write and lost its answer.
		const [taken] = await db
			.update(idempotencyRecords)
			.set({ claimId, requestHash, createdAt: now })
			.where(
				and(
					where,
					eq(idempotencyRecords.claimId, existing.claimId),
					eq(idempotencyRecords.state, existing.state),
				),
			)
			.returning({ key: idempotencyRecords.key });
		if (!taken) throw inUse();
		// expires_at stays as the first request set it: the key's ids (WriteMark.idFor) stay the same.
		firstClaimedAt = Date.parse(existing.expiresAt) - TTL_MS;
		if (existing.state === "committed") {
			c.set("idempotencyCommitted", JSON.parse(existing.resources ?? "[]") as string[]);
			c.header("Idempotent-Replayed", "true");
		}
	}
	c.set("idempotencyClaim", { ...id, claimId, requestHash, firstClaimedAt } satisfies IdempotencyClaim);

	await next();
	if (c.res.status >= 500) {
		// Kept when the write was committed: a repeat then answers what it stored. Otherwise the claim is given
		// up at once, as if abandoned, so that a repeat runs afresh now — with the key's ids, which a call to
		// another service may already have been made with (a refund through Stripe before its credit note).
		await db
			.update(idempotencyRecords)
			.set({ createdAt: new Date(0).toISOString() })
			.where(and(ours, eq(idempotencyRecords.state, "in_progress")));
		return;
	}
	idempotencyFaults.beforeAnswerStored?.(c.req.path);
	const body = withoutSecrets(await c.res.clone().text(), c.get("secretFields") ?? []);
	await db
		.update(idempotencyRecords)
		.set({ state: "completed", statusCode: c.res.status, responseBody: body })
		.where(ours);
}

function inUse(): ApiError {
	return new ApiError(
		"idempotency_key_in_use",
		"A request with this Idempotency-Key is still in progress; retry in a few seconds.",
	);
}

function withoutSecrets(body: string, fields: string[]): string {
	if (fields.length === 0 || !body.startsWith("{")) return body;
	const parsed = JSON.parse(body) as Record<string, unknown>;
	for (const field of fields) if (field in parsed) parsed[field] = null;
	return JSON.stringify(parsed);
}
