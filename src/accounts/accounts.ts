import { eq } from "drizzle-orm";
import { created } from "../audit/record";
import { updateAudited, writeAudited } from "../audit/write";
import { type Db, isUniqueViolation } from "../db/client";
import { newestFirst } from "../db/pages";
import { type ById, getInScope, type InScope, type Page } from "../db/rows";
import { accounts } from "../db/schema";
import { inScope, type Scope } from "../db/scope";
import type { Env } from "../env";
import { conflict } from "../lib/errors";
import { newId } from "../lib/ids";
import { nowIso } from "../lib/time";
import { stripeSecretKey } from "../payment-provider/config";
import { createStripeCustomer, noStripeKey } from "../payment-provider/customers";
import { checkHierarchy, hierarchyChanged, isHierarchyViolation } from "./hierarchy";

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
	/** How its invoices are paid (docs/payments.md#accounts). */
	payment_provider: "manual" | "stripe";
	stripe_customer_id: string | null;
	stripe_payment_method_id: string | null;
	block_on_failed_payment: boolean;
	/** Its parent, who pays or shares credits (docs/account-hierarchies.md); null: none. */
	parent_account_id: string | null;
	billing: "self" | "parent";
	use_parent_credits: boolean;
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
	payment_provider?: "manual" | "stripe";
	stripe_customer_id?: string | null;
	stripe_payment_method_id?: string | null;
	block_on_failed_payment?: boolean;
	parent_account_id?: string | null;
	billing?: "self" | "parent";
	use_parent_credits?: boolean;
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
		payment_provider: row.paymentProvider,
		stripe_customer_id: row.stripeCustomerId,
		stripe_payment_method_id: row.stripePaymentMethodId,
		block_on_failed_payment: row.blockOnFailedPayment,
		parent_account_id: row.parentAccountId,
		billing: row.billing,
		use_parent_credits: row.useParentCredits,
		created_at: row.createdAt,
	};
}

/** What account.created records: the view's fields but its id, grace days and creation time. */
function createdFields(view: AccountView): Omit<AccountView, "id" | "invoice_grace_days" | "created_at"> {
	const { id: _id, invoice_grace_days: _graceDays, created_at: _createdAt, ...fields } = view;
	return fields;
}

function duplicateExternalId(externalId: string | null | undefined) {
	return conflict(`Another account already has external_id '${externalId}'.`);
}

type AccountRow = typeof accounts.$inferSelect;

/**
 * An account paying through Stripe needs a key in its environment and a Stripe customer: when it has none, one is
 * made from the account as it will be (docs/payments.md#accounts). Answers the customer id to store, if new.
 */
async function stripeCustomerFor(
	env: Env | undefined,
	scope: Scope,
	account: AccountRow,
): Promise<string | null> {
	if (account.paymentProvider !== "stripe" || account.stripeCustomerId !== null) return null;
	if (env === undefined || stripeSecretKey(env, scope.environment) === null)
		throw noStripeKey(scope.environment);
	return createStripeCustomer(env, scope.environment, account);
}

export async function createAccount({
	db,
	env,
	scope,
	input,
}: {
	db: Db;
	env?: Env;
	scope: Scope;
	input: AccountInput;
}) {
	const now = nowIso();
	const row: AccountRow = {
		id: newId("acct"),
		environment: scope.environment,
		name: input.name,
		email: input.email,
		billingAddress: input.billing_address ?? null,
		currency: input.currency ?? "USD",
		externalId: input.external_id ?? null,
		netTermsDays: input.net_terms_days ?? DEFAULT_NET_TERMS_DAYS,
		invoiceGraceDays: input.invoice_grace_days ?? 0,
		paymentProvider: input.payment_provider ?? "manual",
		stripeCustomerId: input.stripe_customer_id ?? null,
		stripePaymentMethodId: input.stripe_payment_method_id ?? null,
		blockOnFailedPayment: input.block_on_failed_payment ?? false,
		parentAccountId: input.parent_account_id ?? null,
		billing: input.billing ?? "self",
		useParentCredits: input.use_parent_credits ?? false,
		createdAt: now,
		updatedAt: now,
	};
	await checkHierarchy(db, scope, null, row);
	row.stripeCustomerId ??= await stripeCustomerFor(env, scope, row);
	try {
		await writeAudited(db, scope, [db.insert(accounts).values(row)], {
			action: "account.created",
			resourceId: row.id,
			changes: created(createdFields(toView(row))),
		});
	} catch (error) {
		if (isUniqueViolation(error)) throw duplicateExternalId(input.external_id);
		if (isHierarchyViolation(error)) throw hierarchyChanged();
		throw error;
	}
	return toView(row);
}

export async function getAccount({ db, scope, id }: ById): Promise<AccountView> {
	return toView(await getInScope(db, scope, accounts, "account", id));
}

export async function listAccounts({
	db,
	scope,
	limit,
	offset,
	parent_account_id,
}: InScope & Page & { parent_account_id?: string }) {
	const where =
		parent_account_id === undefined
			? inScope(scope, accounts)
			: inScope(scope, accounts, eq(accounts.parentAccountId, parent_account_id));
	const { rows, total } = await newestFirst(db, accounts, where, { limit, offset });
	return { items: rows.map(toView), total };
}

export async function updateAccount({
	db,
	env,
	scope,
	id,
	input,
}: ById & {
	env?: Env;
	input: Partial<Omit<AccountInput, "currency">>;
}): Promise<AccountView> {
	const changes: Partial<AccountRow> = {
		...(input.name !== undefined ? { name: input.name } : {}),
		...(input.email !== undefined ? { email: input.email } : {}),
		...(input.billing_address !== undefined ? { billingAddress: input.billing_address } : {}),
		...(input.external_id !== undefined ? { externalId: input.external_id } : {}),
		...(input.net_terms_days !== undefined ? { netTermsDays: input.net_terms_days } : {}),
		...(input.invoice_grace_days !== undefined ? { invoiceGraceDays: input.invoice_grace_days } : {}),
		...(input.payment_provider !== undefined ? { paymentProvider: input.payment_provider } : {}),
		...(input.stripe_customer_id !== undefined ? { stripeCustomerId: input.stripe_customer_id } : {}),
		...(input.stripe_payment_method_id !== undefined
			? { stripePaymentMethodId: input.stripe_payment_method_id }
			: {}),
		...(input.block_on_failed_payment !== undefined
			? { blockOnFailedPayment: input.block_on_failed_payment }
			: {}),
		...hierarchyChanges(input),
		updatedAt: nowIso(),
	};
	if (changes.parentAccountId !== undefined || changes.billing !== undefined) {
		const before = await getInScope(db, scope, accounts, "account", id);
		await checkHierarchy(db, scope, id, { ...before, ...changes } as AccountRow);
	}
	if (
		input.payment_provider === "stripe" &&
		(env === undefined || stripeSecretKey(env, scope.environment) === null)
	) {
		throw noStripeKey(scope.environment);
	}
	if (input.payment_provider === "stripe" || input.stripe_customer_id === null) {
		const before = await getInScope(db, scope, accounts, "account", id);
		const customerId = await stripeCustomerFor(env, scope, { ...before, ...changes } as AccountRow);
		if (customerId !== null) changes.stripeCustomerId = customerId;
	}
	try {
		return toView(await updateAudited(db, scope, accounts, "account", id, changes, "account.updated"));
	} catch (error) {
		if (isUniqueViolation(error)) throw duplicateExternalId(input.external_id);
		if (isHierarchyViolation(error)) throw hierarchyChanged();
		throw error;
	}
}

function hierarchyChanges(input: Partial<AccountInput>): Partial<AccountRow> {
	return {
		...(input.parent_account_id !== undefined ? { parentAccountId: input.parent_account_id } : {}),
		...(input.billing !== undefined ? { billing: input.billing } : {}),
		...(input.use_parent_credits !== undefined ? { useParentCredits: input.use_parent_credits } : {}),
	};
}
