/**
 * An account's statement for a billing period (docs/account-hierarchies.md#statements): the sums of every issued,
 * not void invoice of that period the account pays — its own and those of its children billed to it — in one
 * currency. Figures are summed from the invoices as the API shows them, so they always agree with them.
 */
import { getInScope, type InScope } from "../db/rows";
import { accounts } from "../db/schema";
import { Decimal } from "../lib/decimal";
import { type InvoiceView, listInvoices } from "./invoices";

export interface StatementView {
	account_id: string;
	billing_period: string;
	currency: string;
	invoices: string[];
	amount: number;
	credits_applied: number;
	amount_due: number;
	amount_paid: number;
	amount_remaining: number;
}

const PAGE = 100;

/** Every issued invoice of the period this account pays, oldest first. */
async function paidInvoices(
	{ db, scope }: InScope,
	accountId: string,
	billingPeriod: string,
): Promise<InvoiceView[]> {
	const all: InvoiceView[] = [];
	for (let offset = 0; ; offset += PAGE) {
		const { items, total } = await listInvoices({
			db,
			scope,
			filters: { payer_account_id: accountId, billing_period: billingPeriod, issued: true },
			limit: PAGE,
			offset,
		});
		all.push(...items);
		if (offset + PAGE >= total || items.length === 0) break;
	}
	return all.reverse();
}

export async function accountStatement({
	db,
	scope,
	accountId,
	billingPeriod,
	currency,
}: InScope & { accountId: string; billingPeriod: string; currency?: string }): Promise<StatementView> {
	const account = await getInScope(db, scope, accounts, "account", accountId);
	const inCurrency = currency ?? account.currency;
	const invoices = (await paidInvoices({ db, scope }, accountId, billingPeriod)).filter(
		(invoice) => invoice.currency === inCurrency && invoice.status !== "void",
	);
	const sum = (field: "amount" | "credits_applied" | "amount_due" | "amount_paid" | "amount_remaining") =>
		Decimal.sum(invoices.map((invoice) => Decimal.from(invoice[field]))).toNumber();
	return {
		account_id: account.id,
		billing_period: billingPeriod,
		currency: inCurrency,
		invoices: invoices.map((invoice) => invoice.id),
		amount: sum("amount"),
		credits_applied: sum("credits_applied"),
		amount_due: sum("amount_due"),
		amount_paid: sum("amount_paid"),
		amount_remaining: sum("amount_remaining"),
	};
}
