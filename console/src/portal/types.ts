/**
 * What the customer portal's API (/portal/api) answers, as the portal page reads it. Kept here rather than in
 * ../types.ts: the console's types follow /v1, and the portal needs only these few shapes.
 */

export interface PortalPage {
	total: number;
	limit: number;
	offset: number;
}

export interface PortalUsageLine {
	kind: "action" | "outcome";
	type: string;
	count: number;
	value: number | null;
}

export interface PortalCharge {
	metric: string;
	model: string;
	quantity: number;
	billable_quantity: number;
	amount: number;
}

export interface PortalSubscription {
	id: string;
	rate_plan_id: string;
	rate_plan_name: string;
	status: "active" | "cancelled";
	started_at: string;
	cancel_at: string | null;
	cancelled_at: string | null;
	billing_period: string;
	period_start: string;
	period_end: string;
	currency: string;
	usage: PortalUsageLine[];
	charges: PortalCharge[];
	amount_so_far: number;
	/** What each charge is called on the invoice, by metric. */
	charge_descriptions?: Record<string, string>;
}

export interface PortalAlert {
	id: string;
	subscription_id: string;
	metric: string | null;
	threshold: number;
	name: string | null;
	block: boolean;
	status: "armed" | "triggered";
	triggered_at: string | null;
	billing_period: string;
}

export interface PortalGrant {
	id: string;
	amount: number;
	remaining: number;
	currency: string;
	expires_at: string | null;
	description: string | null;
	status: "active" | "depleted" | "expired" | "void";
	created_at: string;
}

export interface PortalOverview {
	seller: string;
	account: { id: string; name: string; email: string; currency: string };
	billing_period: string;
	subscriptions: PortalSubscription[];
	alerts: PortalAlert[];
	credits: {
		currency: string;
		available: number;
		pending_usage: number;
		projected: number;
		grants: PortalGrant[];
	};
}

export interface PortalInvoice {
	id: string;
	number: string;
	billing_period: string;
	kind: "regular" | "supplementary";
	status: "open" | "paid" | "void";
	currency: string;
	amount: number;
	amount_due: number;
	issued_at: string;
	due_at: string;
	/** How it is being collected; `payment_url`: the page where it is paid online (Stripe Checkout). */
	collection?: { status: string; payment_url: string | null };
}

export interface PortalPayment {
	id: string;
	/** Present once the API says it; a refund is a negative amount either way. */
	kind?: "payment" | "refund";
	invoice_id: string;
	amount: number;
	currency: string;
	reference: string | null;
	/** Who collected it: by hand, or through Stripe. */
	provider?: "manual" | "stripe";
	paid_at: string;
}

export interface PortalCreditNote {
	id: string;
	number: string;
	invoice_id: string;
	currency: string;
	amount: number;
	reason: "duplicate" | "fraudulent" | "order_change" | "product_unsatisfactory" | "billing_error" | "other";
	memo: string | null;
	applied: { to_invoice: number; refunded: number; credited: number };
	created_at: string;
}

export type PortalInvoices = PortalPage & { invoices: PortalInvoice[] };
export type PortalPayments = PortalPage & { payments: PortalPayment[] };
export type PortalCreditNotes = PortalPage & { credit_notes: PortalCreditNote[] };

/** The console's view of a minted session (POST /v1/accounts/{id}/portal-sessions). */
export interface PortalSessionView {
	id: string;
	account_id: string;
	token: string | null;
	url: string | null;
	expires_at: string;
	created_at: string;
}
