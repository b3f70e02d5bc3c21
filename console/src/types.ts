/**
 * The API's resources as the console reads them: names for the server's own view types, which api-types.ts
 * holds, generated from GET /v1/openapi.json by scripts/console-types.mjs (`npm run build:console`).
 */
import type { Page } from "./api";
import type { components, paths } from "./api-types";

type Schemas = components["schemas"];
/** The JSON body of a GET's 200 answer. */
type Answer<Path extends keyof paths> = paths[Path] extends {
	get: { responses: { 200: { content: { "application/json": infer Body } } } };
}
	? Body
	: never;

export type List<Name extends string, T> = Page & { [key in Name]: T[] };

export type ApiKey = Schemas["ApiKey"];
export type Account = Schemas["Account"];
export type RatePlan = Schemas["RatePlan"];
export type Subscription = Schemas["Subscription"];
export type PriceOverride = Schemas["PriceOverride"];
export type Coupon = Schemas["Coupon"];
export type Discount = Schemas["Discount"];
export type InvoiceLine = Schemas["InvoiceLine"];
export type Invoice = Schemas["Invoice"];
export type Agent = Schemas["Agent"];
export type AgentInstance = Schemas["AgentInstance"];
export type CostRecord = Schemas["CostRecord"];
export type CostList = Answer<"/v1/costs">;
export type Pnl = Schemas["PnlReport"];
export type PnlReport = Schemas["PnlReport"];
export type MarginRow = Schemas["PnlBreakdownRow"];
export type MarginsReport = Schemas["MarginsReport"];
export type RevenueReport = Schemas["RevenueReport"];
export type UsageLine = Schemas["UsageLine"];
export type Usage = Schemas["Usage"];
export type WebhookEndpoint = Schemas["WebhookEndpoint"];
export type WebhookDelivery = Schemas["WebhookDelivery"];
export type WebhookDeliveryWithPayload = Schemas["WebhookDeliveryWithPayload"];
export type TestResult = Schemas["WebhookTestResult"]["result"];
export type Payment = Schemas["Payment"];
export type MeteredEvent = Schemas["Event"];
export type EventPage = Schemas["EventPage"];
export type AuditRecord = Schemas["AuditRecord"];
export type AuditLogPage = Schemas["AuditLogPage"];
export type CreditGrant = Schemas["CreditGrant"];
export type Balance = Schemas["CreditBalance"];
export type Alert = Schemas["Alert"];
export type UnbilledUsage = Schemas["UnbilledUsage"];
export type CreditNote = Schemas["CreditNote"];
export type ExchangeRate = Schemas["ExchangeRate"];
export type PlanMigration = Schemas["PlanMigration"];
export type UpcomingInvoice = Schemas["UpcomingInvoice"];

/** What an invoice document gained later (terms, payments): optional, so that an older invoice still reads. */
export type InvoiceDocumentFields = Partial<
	Pick<Invoice, "due_at" | "bill_to" | "credits_applied" | "amount_due" | "payments">
>;

/** The events a webhook endpoint may subscribe to, as the endpoint form offers them. */
export const WEBHOOK_EVENTS = [
	"invoice.created",
	"invoice.paid",
	"payment.successful",
	"outcome.completed",
	"subscription.created",
	"subscription.updated",
	"subscription.cancelled",
	"credit_note.created",
] as const satisfies readonly Schemas["WebhookEventKind"][];
