/**
 * An invoice's `collection` (docs/payments.md#collection-states): how it is being paid and how far that went.
 * Manual accounts' invoices show provider "manual", status "none"; the rest is filled in by payments/.
 */
import type { z } from "@hono/zod-openapi";
import { chunkJsonRows, returned } from "../db/batch";
import { invoiceCollections } from "../db/schema";
import type { Collection } from "../schemas/collection";

export type CollectionView = z.infer<typeof Collection>;

/** The collection columns, to add to a `select` of invoices (the invoice's own columns keep their names). */
export const collectionColumns = {
	collectionProvider: invoiceCollections.collectionProvider,
	collectionStatus: invoiceCollections.collectionStatus,
	collectionAttempts: invoiceCollections.collectionAttempts,
	collectionNextAttemptAt: invoiceCollections.collectionNextAttemptAt,
	collectionPaymentIntentId: invoiceCollections.collectionPaymentIntentId,
	collectionCheckoutSessionId: invoiceCollections.collectionCheckoutSessionId,
	collectionPaymentUrl: invoiceCollections.collectionPaymentUrl,
	collectionLastError: invoiceCollections.collectionLastError,
};

export type CollectionRow = {
	[K in keyof typeof collectionColumns]: (typeof invoiceCollections.$inferSelect)[K];
};

/**
 * Statements that read back the collections of invoices a batch has just inserted (triggers of migration 0017
 * set them as an invoice is issued): put them last in that batch, and give their results to collectionsFrom.
 */
export function readCollections(d1: D1Database, environment: string, ids: readonly string[]) {
	return chunkJsonRows(ids.map((id) => JSON.stringify(id))).map((group) =>
		d1
			.prepare(
				`SELECT id, collection_provider AS collectionProvider, collection_status AS collectionStatus,
					collection_attempts AS collectionAttempts, collection_next_attempt_at AS collectionNextAttemptAt,
					collection_payment_intent_id AS collectionPaymentIntentId,
					collection_checkout_session_id AS collectionCheckoutSessionId,
					collection_payment_url AS collectionPaymentUrl, collection_last_error AS collectionLastError
				FROM invoices WHERE environment = ?1 AND id IN (SELECT value FROM json_each(?2))`,
			)
			.bind(environment, `[${group.join(",")}]`),
	);
}

/** The collections readCollections read, by invoice id. */
export function collectionsFrom(results: readonly D1Result[]): Map<string, CollectionRow> {
	const rows = results.flatMap((result) => returned<CollectionRow & { id: string }>(result));
	return new Map(rows.map(({ id, ...collection }) => [id, collection]));
}

/** A row read without the collection columns counts as collected by hand. */
export function collectionView(row: Partial<CollectionRow>): CollectionView {
	return {
		provider: row.collectionProvider ?? "manual",
		status: row.collectionStatus ?? "none",
		attempts: row.collectionAttempts ?? 0,
		next_attempt_at: row.collectionNextAttemptAt ?? null,
		payment_intent_id: row.collectionPaymentIntentId ?? null,
		checkout_session_id: row.collectionCheckoutSessionId ?? null,
		payment_url: row.collectionPaymentUrl ?? null,
		last_error: row.collectionLastError ?? null,
	};
}
