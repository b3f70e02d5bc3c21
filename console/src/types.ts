/** The API's resources as the console reads them (CONTRACT.md; GET /v1/openapi.json is the full truth). */
import type { Page } from "./api";
import type { Environment, Permission } from "./session";

export type List<Name extends string, T> = Page & { [key in Name]: T[] };

export interface ApiKey {
	id: string;
	type: "sdk" | "api";
	environment: Environment;
	permission: Permission | null;
	name: string | null;
	prefix: string;
	created_at: string;
	last_used_at: string | null;
}

export interface Account {
	id: string;
	name: string;
	email: string;
	currency: string;
	external_id: string | null;
	billing_address: Record<string, string> | null;
	created_at: string;
}

export interface RatePlan {
	id: string;
	name: string;
	currency: string;
	status: "active" | "archived";
}

export interface Subscription {
	id: string;
	account_id: string;
	rate_plan_id: string;
	pending_rate_plan_id: string | null;
	agent_instance_ids: string[];
	status: "active" | "cancelled";
	started_at: string;
	cancelled_at: string | null;
	created_at: string;
}

export interface InvoiceLine {
	metric: string;
	description: string;
	quantity: number;
	amount: number;
}

export interface Invoice {
	id: string;
	number: string;
	account_id: string;
	subscription_id: string;
	rate_plan_id: string;
	billing_period: string;
	period_start: string;
	period_end: string;
	kind: "regular" | "supplementary";
	status: "open" | "paid" | "void";
	currency: string;
	line_items: InvoiceLine[];
	amount: number;
	issued_at: string;
	paid_at: string | null;
	voided_at: string | null;
	created_at: string;
}

export interface Agent {
	id: string;
	name: string;
	type: string;
	description: string | null;
	created_at: string;
}

export interface AgentInstance {
	key: string;
	agent_id: string | null;
	name: string | null;
	created_at: string;
}

export interface CostRecord {
	id: string;
	agent_id: string | null;
	customer_id: string | null;
	cost_type: string;
	amount: number;
	currency: string;
	period: string;
	source: "events" | "manual";
}

export type CostList = List<"costs", CostRecord> & { count: number; currency: string };

export interface Pnl {
	revenue: number;
	costs: number;
	margin: number;
	margin_percent: number;
	currency: string;
	start_date: string;
	end_date: string;
}

export interface RevenueReport {
	revenue: number;
	currency: string;
	start_date: string;
	end_date: string;
	group_by: string | null;
	breakdown: { id: string | null; name: string; revenue: number }[];
}

export interface UsageLine {
	kind: "action" | "outcome";
	type: string;
	count: number;
	value: number | null;
}

export interface Usage {
	start_date: string;
	end_date: string;
	usage: UsageLine[];
	billing_period?: string;
	currency?: string;
	total?: number;
}

export const WEBHOOK_EVENTS = [
	"invoice.created",
	"invoice.paid",
	"payment.successful",
	"outcome.completed",
	"subscription.created",
	"subscription.updated",
	"subscription.cancelled",
] as const;

export interface WebhookEndpoint {
	id: string;
	url: string;
	events: string[];
	description: string | null;
	status: "enabled" | "disabled";
	created_at: string;
}

export interface WebhookDelivery {
	id: string;
	event_id: string;
	event: string;
	status: "pending" | "succeeded" | "failed";
	attempts: number;
	last_status_code: number | null;
	last_error: string | null;
	next_attempt_at: string | null;
	created_at: string;
	delivered_at: string | null;
}

export interface WebhookDeliveryWithPayload extends WebhookDelivery {
	payload: Record<string, unknown>;
}

export interface TestResult {
	delivered: boolean;
	status_code: number | null;
	duration_ms: number;
	error: string | null;
	delivery_id: string;
}

// The second wave (CONTRACT §15–§21). The pages below read these shapes; where an endpoint is not deployed yet,
// the API answers 404 and the page shows that answer in place.

/** §20: what an invoice gains. Optional, so that a v1 invoice still reads. */
export interface InvoiceDocumentFields {
	due_at?: string | null;
	bill_to?: { name: string; email: string; billing_address: Record<string, string> | null } | null;
	credits_applied?: number;
	amount_due?: number;
	payments?: { id: string; amount: number; reference: string | null; paid_at: string }[];
}

export interface Payment {
	id: string;
	invoice_id: string;
	account_id: string;
	amount: number;
	currency: string;
	reference: string | null;
	paid_at: string;
}

/** §21 */
export interface MarginRow {
	id: string | null;
	name: string;
	revenue: number;
	costs: number;
	margin: number;
	margin_percent: number;
}

export interface PnlReport extends Pnl {
	breakdown?: MarginRow[];
	series?: ({ period: string } & Omit<MarginRow, "id" | "name">)[];
}

/** §15 */
export interface MeteredEvent {
	id: string;
	kind: "action" | "outcome";
	agent_key: string;
	type: string;
	value: number | null;
	metadata: Record<string, unknown> | null;
	timestamp: string;
	received_at: string;
	subscription_id: string | null;
	billable: boolean;
}

export interface EventPage {
	events: MeteredEvent[];
	next_cursor: string | null;
}

/** §17 */
export interface CreditGrant {
	id: string;
	account_id: string;
	amount: number;
	remaining: number;
	currency: string;
	expires_at: string | null;
	description: string | null;
	status: "active" | "depleted" | "expired" | "void";
	created_at: string;
}

export interface Balance {
	account_id: string;
	currency: string;
	available: number;
	pending_usage: number;
	projected: number;
}

/** §18 */
export interface Alert {
	id: string;
	subscription_id: string;
	account_id: string;
	metric: string | null;
	threshold: number;
	name: string | null;
	block: boolean;
	status: "armed" | "triggered";
	triggered_at: string | null;
	billing_period: string;
	created_at: string;
}

/** §19 */
export interface UnbilledUsage {
	billing_period: string;
	usage: {
		agent_key: string;
		kind: "action" | "outcome";
		type: string;
		count: number;
		value: number | null;
	}[];
}
