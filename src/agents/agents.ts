import { eq } from "drizzle-orm";
import type { Db } from "../db/client";
import { newestFirst } from "../db/pages";
import { agents } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export type AgentType = "langgraph" | "crewai" | "n8n" | "custom";

export interface AgentView {
	id: string;
	name: string;
	type: AgentType;
	description: string | null;
	created_at: string;
}

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
}: {
	db: Db;
	scope: Scope;
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
	await db.insert(agents).values(row);
	return toView(row);
}

export async function getAgent({ db, scope, id }: { db: Db; scope: Scope; id: string }): Promise<AgentView> {
	const [row] = await db
		.select()
		.from(agents)
		.where(inScope(scope, agents, eq(agents.id, id)));
	if (!row) throw notFound("agent", id);
	return toView(row);
}

export async function listAgents({
	db,
	scope,
	limit,
	offset,
}: {
	db: Db;
	scope: Scope;
	limit: number;
	offset: number;
}) {
	const { rows, total } = await newestFirst(db, agents, inScope(scope, agents), { limit, offset });
	return { items: rows.map(toView), total };
}

export async function updateAgent({
	db,
	scope,
	id,
	input,
}: {
	db: Db;
	scope: Scope;
	id: string;
	input: { name?: string; description?: string | null };
}): Promise<AgentView> {
	const [row] = await db
		.update(agents)
		.set({ ...input, updatedAt: nowIso() })
		.where(inScope(scope, agents, eq(agents.id, id)))
		.returning();
	if (!row) throw notFound("agent", id);
	return toView(row);
}
