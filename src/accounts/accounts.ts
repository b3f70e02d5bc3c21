import { created } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import { type Db, isUniqueViolation } from "../db/client";
import { newestFirst } from "../db/pages";
import { type ById, getInScope, type InScope, type Page } from "../db/rows";
import { accounts } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import { conflict } from "../lib/errors";
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
	/** Days from an invoice's issue to its due date (docs/billing.md#invoice-documents-and-payments). */
	net_terms_days: number;
	/** Days a period's invoice stays a draft (docs/credit-notes.md#draft-invoices). */
	invoice_grace_days: number;
	created_at: string;
}

export interface AccountInput {
	name: string;
	email: string;
	billing_address?: BillingAddress | null;
	currency?: string;
	external_id?: string | null;
	net_terms_days?: number;
	invoice_grace_days?: number;
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
		invoice_grace_days: row.invoiceGraceDays,
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
		invoiceGraceDays: input.invoice_grace_days ?? 0,
		createdAt: now,
		updatedAt: now,
	};
	try {
		await writeAudited(db, scope, [db.insert(accounts).values(row)], {
			action: "account.created",
			resourceId: row.id,
			changes: created({
				name: row.name,
				email: row.email,
				billing_address: row.billingAddress,
				currency: row.currency,
				external_id: row.externalId,
				net_terms_days: row.netTermsDays,
			}),
		});
	} catch (error) {
		if (isUniqueViolation(error)) throw duplicateExternalId(input.external_id);
		throw error;
	}
	return toView(row);
}

export async function getAccount({ db, scope, id }: ById): Promise<AccountView> {
	return toView(await getInScope(db, scope, accounts, "account", id));
}

export async function listAccounts({ db, scope, limit, offset }: InScope & Page) {
	const { rows, total } = await newestFirst(db, accounts, inScope(scope, accounts), { limit, offset });
	return { items: rows.map(toView), total };
}

export async function updateAccount({
	db,
	scope,
	id,
	input,
}: ById & {
	input: Partial<Omit<AccountInput, "currency">>;
}): Promise<AccountView> {
	const changes = {
		...(input.name !== undefined ? { name: input.name } : {}),
		...(input.email !== undefined ? { email: input.email } : {}),
		...(input.billing_address !== undefined ? { billingAddress: input.billing_address } : {}),
		...(input.external_id !== undefined ? { externalId: input.external_id } : {}),
		...(input.net_terms_days !== undefined ? { netTermsDays: input.net_terms_days } : {}),
		...(input.invoice_grace_days !== undefined ? { invoiceGraceDays: input.invoice_grace_days } : {}),
		updatedAt: nowIso(),
	};
	try {
		return toView(await updateAudited(db, scope, accounts, "account", id, changes, "account.updated"));
	} catch (error) {
		if (isUniqueViolation(error)) throw duplicateExternalId(input.external_id);
		throw error;
	}
}
