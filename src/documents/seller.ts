import type { Env } from "../env";

const DEFAULT_BILLING_COMPANY_NAME = "Agent Metering & Billing";

/** Who sends the invoices: the Worker variable BILLING_COMPANY_NAME, or the default when it is unset or blank. */
export function sellerName(env: Env): string {
	return env.BILLING_COMPANY_NAME?.trim() || DEFAULT_BILLING_COMPANY_NAME;
}
