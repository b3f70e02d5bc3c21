import type { z } from "@hono/zod-openapi";
import { eq } from "drizzle-orm";
import { created, removed } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import { abortUnlessChanged, isAbortedByGuard } from "../db/batch";
import type { Db } from "../db/client";
import { newestFirst } from "../db/pages";
import { type ById, getInScope, type InScope, type Page } from "../db/rows";
import { webhookDeliveries, webhookEndpoints } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Env } from "../env";
import { notFound, validationError } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { WebhookEventKind } from "./outbox";
import { judgeReceiverUrl, type ReceiverUrlRules } from "./receiver-url";
import type { WebhookEndpoint } from "./schemas";
import { sealWebhookSecret } from "./secret-box";
import { newWebhookSecret } from "./signing";

export type WebhookStatus = "enabled" | "disabled";

export type WebhookEndpointView = z.infer<typeof WebhookEndpoint>;

export interface WebhookEndpointInput {
	url: string;
	events: WebhookEventKind[];
	description?: string | null;
}

/** The url under the rules of where the Worker runs (local receivers only in local development). */
function assertReceiverUrl(url: string, rules: ReceiverUrlRules): void {
	const verdict = judgeReceiverUrl(url, rules);
	if (!verdict.ok) throw validationError("url", verdict.reason);
}

function toView(row: typeof webhookEndpoints.$inferSelect): WebhookEndpointView {
	return {
		id: row.id,
		url: row.url,
		events: row.events as WebhookEventKind[],
		description: row.description,
		status: row.status,
		created_at: row.createdAt,
	};
}

/** The secret is returned here once and stored only encrypted (secret-box.ts). */
export async function createWebhookEndpoint({
	db,
	env,
	scope,
	input,
	rules,
}: InScope & {
	env: Pick<Env, "WEBHOOK_SECRETS_KEY" | "ADMIN_API_KEY">;
	input: WebhookEndpointInput;
	rules: ReceiverUrlRules;
}): Promise<WebhookEndpointView & { secret: string }> {
	assertReceiverUrl(input.url, rules);
	const now = nowIso();
	const id = newId("whk");
	const secret = newWebhookSecret();
	const row = {
		id,
		environment: scope.environment,
		url: input.url,
		events: input.events,
		description: input.description ?? null,
		status: "enabled" as const,
		secret: await sealWebhookSecret(env, id, secret),
		createdAt: now,
		updatedAt: now,
	};
	await writeAudited(db, scope, [db.insert(webhookEndpoints).values(row)], {
		action: "webhook_endpoint.created",
		resourceId: id,
		changes: created({ url: row.url, events: row.events, description: row.description, status: row.status }),
	});
	return { ...toView(row), secret };
}

export async function listWebhookEndpoints({ db, scope, limit, offset }: InScope & Page) {
	const { rows, total } = await newestFirst(db, webhookEndpoints, inScope(scope, webhookEndpoints), {
		limit,
		offset,
	});
	return { items: rows.map(toView), total };
}

export async function getWebhookEndpoint({ db, scope, id }: { db: Db; scope: Scope; id: string }) {
	return { view: toView(await getInScope(db, scope, webhookEndpoints, "webhook endpoint", id)) };
}

export async function updateWebhookEndpoint({
	db,
	scope,
	id,
	input,
	rules,
}: ById & {
	input: Partial<WebhookEndpointInput> & { status?: WebhookStatus };
	rules: ReceiverUrlRules;
}): Promise<WebhookEndpointView> {
	if (input.url !== undefined) assertReceiverUrl(input.url, rules);
	const changes = {
		...(input.url !== undefined ? { url: input.url } : {}),
		...(input.events !== undefined ? { events: input.events } : {}),
		...(input.description !== undefined ? { description: input.description } : {}),
		...(input.status !== undefined ? { status: input.status } : {}),
		updatedAt: nowIso(),
	};
	return toView(
		await updateAudited(
			db,
			scope,
			webhookEndpoints,
			"webhook endpoint",
			id,
			changes,
			"webhook_endpoint.updated",
		),
	);
}

/** Removes the endpoint and its delivery log; queued attempts for it find nothing and are dropped. */
export async function deleteWebhookEndpoint({ db, scope, id }: ById): Promise<void> {
	const before = await getInScope(db, scope, webhookEndpoints, "webhook endpoint", id);
	try {
		await writeAudited(
			db,
			scope,
			[
				db.delete(webhookEndpoints).where(inScope(scope, webhookEndpoints, eq(webhookEndpoints.id, id))),
				abortUnlessChanged(db.$client),
				db
					.delete(webhookDeliveries)
					.where(inScope(scope, webhookDeliveries, eq(webhookDeliveries.endpointId, id))),
			],
			{
				action: "webhook_endpoint.deleted",
				resourceId: id,
				changes: removed({ url: before.url, events: before.events, status: before.status }),
			},
		);
	} catch (error) {
		if (isAbortedByGuard(error)) throw notFound("webhook endpoint", id);
		throw error;
	}
}
