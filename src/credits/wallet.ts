/**
 * Which grants pay an invoice (docs/billing.md#prepaid-credits), pure so that it can be checked by properties. Active grants pay
 * first the one expiring soonest, grants without expiry last, then the oldest; each pays what it has left, up to
 * what the invoice still owes. Amounts are integers in minor units of the currency, so nothing is rounded here.
 */
import { Decimal } from "../lib/decimal";
import { minorUnits } from "../lib/money";

export interface SpendableGrant {
	id: string;
	accountId: string;
	remainingMinor: bigint;
	expiresAt: string | null;
	createdAt: string;
	/** The grant's currency: only grants in an invoice's currency pay it. */
	currency?: string;
	/** A monthly grant's period (recurring.ts): once expired, it pays only invoices of that period. */
	period?: string | null;
}

export interface CreditApplication {
	grantId: string;
	amountMinor: bigint;
	/** The grant's account, when it is not the invoice's (a parent's, docs/account-hierarchies.md). */
	accountId?: string;
}

/** The order in which grants are spent. */
export function spendingOrder(a: SpendableGrant, b: SpendableGrant): number {
	if (a.expiresAt !== b.expiresAt) {
		if (a.expiresAt === null) return 1;
		if (b.expiresAt === null) return -1;
		return a.expiresAt < b.expiresAt ? -1 : 1;
	}
	if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
	return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** The active grants of some accounts, spent invoice after invoice as one generation creates them. */
export class CreditWallet {
	private readonly byAccount = new Map<string, SpendableGrant[]>();

	constructor(grants: readonly SpendableGrant[]) {
		for (const grant of [...grants].sort(spendingOrder)) {
			if (grant.remainingMinor <= 0n) continue;
			const list = this.byAccount.get(grant.accountId) ?? [];
			list.push({ ...grant });
			this.byAccount.set(grant.accountId, list);
		}
	}

	/** Spends up to `amountMinor` of the account's grants (nothing for an amount ≤ 0) and says from which. */
	spend(
		accountId: string,
		amountMinor: bigint,
		invoice?: { period: string; issuedAt: string },
	): CreditApplication[] {
		const applications: CreditApplication[] = [];
		let owed = amountMinor;
		for (const grant of this.byAccount.get(accountId) ?? []) {
			if (owed <= 0n) break;
			if (!paysInvoice(grant, invoice)) continue;
			// biome-ignore lint/complexity/useMathMinMax: bigints, which Math.min does not take
			const take = grant.remainingMinor < owed ? grant.remainingMinor : owed;
			if (take <= 0n) continue;
			grant.remainingMinor -= take;
			owed -= take;
			applications.push({ grantId: grant.id, amountMinor: take });
		}
		return applications;
	}

	/** What the account has left to spend. */
	available(accountId: string): bigint {
		return (this.byAccount.get(accountId) ?? []).reduce((sum, grant) => sum + grant.remainingMinor, 0n);
	}
}

/**
 * An amount in minor units of its currency. Amounts with more decimals than the currency has (which invoices,
 * sums of rounded lines, never have) are cut toward zero, so credits never pay more than is owed.
 */
export function toMinor(amount: Decimal, currency: string): bigint {
	const digits = minorUnits(currency);
	if (amount.scale <= digits) return amount.units * 10n ** BigInt(digits - amount.scale);
	return amount.units / 10n ** BigInt(amount.scale - digits);
}

export function fromMinor(minor: bigint, currency: string): Decimal {
	return Decimal.fromUnits(minor, minorUnits(currency));
}

/** Where a wallet keeps an account's grants in one currency: only grants in an invoice's currency pay it. */
export const walletKey = (accountId: string, currency: string) => `${accountId}/${currency}`;

/** A wallet over grants kept per account and currency; spend with walletKey(account, currency). */
export function walletByCurrency(grants: readonly SpendableGrant[]): CreditWallet {
	return new CreditWallet(
		grants.map((grant) => ({ ...grant, accountId: walletKey(grant.accountId, grant.currency ?? "") })),
	);
}

/**
 * Whether a grant may pay an invoice: any grant before it expires; a monthly grant after it expired only the
 * invoices of its own period (those the monthly run and later generations issue for it).
 */
function paysInvoice(grant: SpendableGrant, invoice: { period: string; issuedAt: string } | undefined) {
	if (grant.expiresAt === null || invoice === undefined || grant.expiresAt > invoice.issuedAt) return true;
	return grant.period !== null && grant.period !== undefined && grant.period === invoice.period;
}
