import { z } from "@hono/zod-openapi";
import { BILLING_PERIOD_PATTERN } from "../billing-period/period";
import { Collection } from "../schemas/collection";
import { pageQuery } from "../schemas/pages";
import { PaymentKind } from "../schemas/payments";

export const billingPeriod = z
	.string()
	.regex(BILLING_PERIOD_PATTERN, "Must be a month written YYYY-MM, e.g. 2026-11.")
	.openapi({ example: "2026-11", description: "A UTC calendar month." });

export const GenerateInvoices = z
	.strictObject({
		billing_period: billingPeriod.openapi({
			description: "The month to invoice: a past month or the current one.",
		}),
		account_id: z
			.string()
			.min(1)
			.optional()
			.openapi({ description: "Only this account's subscriptions; every account when absent." }),
	})
	.openapi("GenerateInvoices");

export const PayInvoice = z
	.strictObject({
		reference: z
			.string()
			.min(1)
			.max(255)
			.optional()
			.openapi({ description: "Your reference for the payment (a transfer id, a receipt number…)." }),
	})
	.openapi("PayInvoice");

export const InvoiceLine = z
	.object({
		metric: z.string().openapi({
			example: "llm_tokens",
			description:
				'"base_fee" for the base fee, "minimum_commitment" for a minimum commitment\'s top-up, "discount" for a ' +
				"coupon's discount (a negative amount).",
		}),
		model: z
			.literal("flat")
			.optional()
			.openapi({ description: 'On a discount line only: "flat", as simulate and real-time usage show it.' }),
		description: z.string().openapi({ example: "LLM tokens — 1,234,567 units (first 100,000 included)" }),
		quantity: z.number().openapi({ description: "On a supplementary invoice: the quantity added since." }),
		amount: z.number().openapi({ description: "Major units of the invoice's currency." }),
		original_amount: z.number().openapi({
			description:
				"The amount before conversion, in original_currency (the plan's); equal to amount for a line computed in " +
				"the invoice's currency (base fee and charges of an unconverted invoice, minimum top-ups, discounts).",
		}),
		original_currency: z.string().openapi({ example: "USD" }),
	})
	.openapi("InvoiceLine");

export const InvoiceExchangeRate = z
	.object({
		base: z.string().openapi({ example: "USD" }),
		quote: z.string().openapi({ example: "EUR" }),
		rate: z.number().openapi({ example: 0.92 }),
		effective_at: z.string().openapi({ example: "2026-11-01T00:00:00.000Z" }),
	})
	.openapi("InvoiceExchangeRate");

export const BillTo = z
	.object({
		name: z.string(),
		email: z.string(),
		billing_address: z.record(z.string(), z.string()).nullable(),
	})
	.openapi("BillTo", {
		description: "The account's name, email and billing address when the invoice was issued.",
	});

export const InvoicePayment = z
	.object({
		id: z.string().openapi({ example: "pay_01jd0000000000000000000000" }),
		kind: PaymentKind,
		amount: z.number().openapi({ description: "Negative for a refund made by a credit note." }),
		reference: z.string().nullable().openapi({
			example: "wire-2026-001",
			description: "A refund's reference is its credit note's number.",
		}),
		provider: z.enum(["manual", "stripe"]).openapi({ description: "stripe: collected through Stripe." }),
		paid_at: z.string(),
	})
	.openapi("InvoicePayment");

export const Invoice = z
	.object({
		id: z.string().openapi({ example: "inv_01jd0000000000000000000000" }),
		number: z.string().nullable().openapi({
			example: "INV-000001",
			description: "Sequential per environment; null for a draft (and a draft discarded by void).",
		}),
		account_id: z.string(),
		payer_account_id: z.string().openapi({
			description: "Who pays it: the parent account under billing 'parent', else account_id.",
		}),
		subscription_id: z.string(),
		rate_plan_id: z.string().openapi({ description: "The plan in effect for the billing period." }),
		billing_period: z.string().openapi({ example: "2026-11" }),
		period_start: z.string().openapi({ example: "2026-11-01T00:00:00.000Z" }),
		period_end: z
			.string()
			.openapi({ example: "2026-12-01T00:00:00.000Z", description: "First instant of the next month." }),
		kind: z.enum(["regular", "supplementary", "threshold"]).openapi({
			description:
				"supplementary: usage that arrived after the period was first invoiced; threshold: the period's usage so " +
				"far, issued when it reached the subscription's invoicing_threshold.",
		}),
		status: z.enum(["draft", "open", "paid", "void"]).openapi({
			description: "draft: not issued yet, its lines still follow late usage (see finalize).",
		}),
		currency: z.string().openapi({ example: "USD" }),
		exchange_rate: z.union([InvoiceExchangeRate, z.null()]).openapi({
			description:
				"The stored rate its lines were converted at from the plan's currency, as created (a reverse pair as " +
				"stored); null when no conversion was needed.",
		}),
		line_items: z.array(InvoiceLine),
		amount: z.number().openapi({ description: "The sum of the line amounts." }),
		issued_at: z.string(),
		paid_at: z.string().nullable(),
		voided_at: z.string().nullable(),
		created_at: z.string(),
		due_at: z.string().openapi({ description: "issued_at plus the account's net_terms_days." }),
		bill_to: BillTo,
		credits_applied: z.number().openapi({ description: "What prepaid credits paid of the amount." }),
		amount_due: z.number().openapi({
			description: "amount − credits_applied − what credit notes took off what was still unpaid.",
		}),
		amount_paid: z
			.number()
			.openapi({ description: "The sum of the invoice's payments; refunds of credit notes count negative." }),
		amount_remaining: z.number().openapi({
			description:
				"What is still to pay: amount_due − amount_paid − what credit notes refunded, never below 0.",
		}),
		payments: z.array(InvoicePayment),
		amount_credited: z.number().openapi({ description: "The sum of the invoice's credit notes." }),
		credit_notes: z.array(z.string()).openapi({
			example: ["cn_01jd0000000000000000000000"],
			description: "Its credit notes' ids, oldest first.",
		}),
		collection: Collection,
	})
	.openapi("Invoice");

export const GeneratedInvoices = z.object({ invoices: z.array(Invoice) }).openapi("GeneratedInvoices");

export const ListInvoicesQuery = z.strictObject({
	...pageQuery,
	account_id: z.string().min(1).optional(),
	payer_account_id: z
		.string()
		.min(1)
		.optional()
		.openapi({ description: "Only the invoices this account pays (its own and its billed children's)." }),
	subscription_id: z.string().min(1).optional(),
	status: z.enum(["draft", "open", "paid", "void"]).optional(),
	billing_period: billingPeriod.optional(),
	overdue: z
		.enum(["true", "false"])
		.transform((value) => value === "true")
		.optional()
		.openapi({ description: "true: only open invoices past their due_at; false: all others." }),
});

export const InvoiceParams = z.object({ invoice_id: z.string() });
