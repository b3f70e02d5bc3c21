import type { z } from "@hono/zod-openapi";
import { created } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import type { Db } from "../db/client";
import { newestFirst } from "../db/pages";
import { type ById, getInScope, type InScope, type Page } from "../db/rows";
import { agents } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import type { Agent } from "./schemas";

export type AgentType = "langgraph" | "crewai" | "n8n" | "custom";

export type AgentView = z.infer<typeof Agent>;

function toView(row: typeof agents.$inferSelect): AgentView {
	return {
		id: row.id,
		name: row.name,
		type: row.type,
		description: row.description,
		created_at: row.createdAt,
	};
}

export async function createAgent({
	db,
	scope,
	input,
}: InScope & {
	input: { name: string; type: AgentType; description?: string | null };
}): Promise<AgentView> {
	const now = nowIso();
	const row = {
		id: newId("agt"),
		environment: scope.environment,
		name: input.name,
		type: input.type,
		description: input.description ?? null,
		createdAt: now,
		updatedAt: now,
	};
	await writeAudited(db, scope, [db.insert(agents).values(row)], {
		action: "agent.created",
		resourceId: row.id,
		changes: created({ name: row.name, type: row.type, description: row.description }),
	});
	return toView(row);
}

export async function getAgent({ db, scope, id }: { db: Db; scope: Scope; id: string }): Promise<AgentView> {
	return toView(await getInScope(db, scope, agents, "agent", id));
}

export async function listAgents({ db, scope, limit, offset }: InScope & Page) {
	const { rows, total } = await newestFirst(db, agents, inScope(scope, agents), { limit, offset });
	return { items: rows.map(toView), total };
}

export async function updateAgent({
	db,
	scope,
	id,
	input,
}: ById & {
	input: { name?: string; description?: string | null };
}): Promise<AgentView> {
	return toView(
		await updateAudited(db, scope, agents, "agent", id, { ...input, updatedAt: nowIso() }, "agent.updated"),
	);
}
