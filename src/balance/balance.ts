/**
 * GET /v1/accounts/{id}/balance (docs/billing.md#prepaid-credits): what the account can spend, what its subscriptions have accrued
 * in the current period and no invoice has billed yet, and the difference. The accrual is what generating the
 * current period now would invoice (invoicing/unbilled-accrual.ts): the period rated as GET /v1/usage rates it,
 * base fee included, less what its invoices already billed.
 */
import { getAccount } from "../accounts/accounts";
import { periodWindow } from "../billing-period/period";
import { availableCredit } from "../credits/grants";
import { database } from "../db/client";
import type { Scope } from "../db/scope";
import type { Env } from "../env";
import { accruedNotInvoiced } from "../invoicing/unbilled-accrual";
import { nowIso, periodOf } from "../lib/time";

export interface BalanceView {
	account_id: string;
	currency: string;
	available: number;
	pending_usage: number;
	projected: number;
}

export async function accountBalance({
	env,
	scope,
	accountId,
	currency: asked,
}: {
	env: Env;
	scope: Scope;
	accountId: string;
	/** docs/currencies.md: the balance in this currency; default the account's. */
	currency?: string;
}): Promise<BalanceView> {
	const db = database(env.DB);
	const account = await getAccount({ db, scope, id: accountId });
	const window = periodWindow(periodOf(nowIso()));
	const currency = asked ?? account.currency;
	const [available, pending] = await Promise.all([
		availableCredit(db, scope, accountId, currency),
		accruedNotInvoiced({ env, db, scope, accountId, window, currency }),
	]);
	return {
		account_id: accountId,
		currency,
		available: available.toNumber(),
		pending_usage: pending.toNumber(),
		projected: available.sub(pending).toNumber(),
	};
}
