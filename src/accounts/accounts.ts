import { eq } from "drizzle-orm";
import { type Db, isUniqueViolation } from "../db/client";
import { newestFirst } from "../db/pages";
import { accounts } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { conflict, notFound } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";

export const DEFAULT_NET_TERMS_DAYS = 30;

export type BillingAddress = Partial<Record<"street" | "city" | "state" | "zip" | "country", string>>;

export interface AccountView {
	id: string;
	name: string;
	email: string;
	billing_address: BillingAddress | null;
	currency: string;
	external_id: string | null;
	/** Days from an invoice's issue to its due date (§20). */
	net_terms_days: number;
	created_at: string;
}

export interface AccountInput {
	name: string;
	email: string;
	billing_address?: BillingAddress | null;
	currency?: string;
	external_id?: string | null;
	net_terms_days?: number;
}

function toView(row: typeof accounts.$inferSelect): AccountView {
	return {
		id: row.id,
		name: row.name,
		email: row.email,
		billing_address: row.billingAddress ?? null,
		currency: row.currency,
		external_id: row.externalId,
		net_terms_days: row.netTermsDays,
		created_at: row.createdAt,
	};
}

function duplicateExternalId(externalId: string | null | undefined) {
	return conflict(`Another account already has external_id '${externalId}'.`);
}

export async function createAccount({ db, scope, input }: { db: Db; scope: Scope; input: AccountInput }) {
	const now = nowIso();
	const row = {
		id: newId("acct"),
		environment: scope.environment,
		name: input.name,
		email: input.email,
		billingAddress: input.billing_address ?? null,
		currency: input.currency ?? "USD",
		externalId: input.external_id ?? null,
		netTermsDays: input.net_terms_days ?? DEFAULT_NET_TERMS_DAYS,
		createdAt: now,
		updatedAt: now,
	};
	try {
		await db.insert(accounts).values(row);
	} catch (error) {
		if (isUniqueViolation(error)) throw duplicateExternalId(input.external_id);
		throw error;
	}
	return toView(row);
}

export async function getAccount({
	db,
	scope,
	id,
}: {
	db: Db;
	scope: Scope;
	id: string;
}): Promise<AccountView> {
	const [row] = await db
		.select()
		.from(accounts)
		.where(inScope(scope, accounts, eq(accounts.id, id)));
	if (!row) throw notFound("account", id);
	return toView(row);
}

export async function listAccounts({
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
	const { rows, total } = await newestFirst(db, accounts, inScope(scope, accounts), { limit, offset });
	return { items: rows.map(toView), total };
}

export async function updateAccount({
	db,
	scope,
	id,
	input,
}: {
	db: Db;
	scope: Scope;
	id: string;
	input: Partial<Omit<AccountInput, "currency">>;
}): Promise<AccountView> {
	const changes = {
		...(input.name !== undefined ? { name: input.name } : {}),
		...(input.email !== undefined ? { email: input.email } : {}),
		...(input.billing_address !== undefined ? { billingAddress: input.billing_address } : {}),
		...(input.external_id !== undefined ? { externalId: input.external_id } : {}),
		...(input.net_terms_days !== undefined ? { netTermsDays: input.net_terms_days } : {}),
		updatedAt: nowIso(),
	};
	try {
		const [row] = await db
			.update(accounts)
			.set(changes)
			.where(inScope(scope, accounts, eq(accounts.id, id)))
			.returning();
		if (!row) throw notFound("account", id);
		return toView(row);
	} catch (error) {
		if (isUniqueViolation(error)) throw duplicateExternalId(input.external_id);
		throw error;
	}
}
