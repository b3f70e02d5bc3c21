import { z } from "@hono/zod-openapi";
import { decimalInput } from "../schemas/numbers";
import { pageQuery } from "../schemas/pages";

export const CREDIT_NOTE_REASONS = [
	"duplicate",
	"fraudulent",
	"order_change",
	"product_unsatisfactory",
	"billing_error",
	"other",
] as const;

const positiveMoney = decimalInput().refine((x) => x > 0, { message: "must be > 0" });

export const CreditNoteLine = z
	.object({
		description: z.string().openapi({ example: "Outage of 2026-11-12: 3 days of base fee" }),
		amount: z.number().openapi({ example: 12.5 }),
	})
	.openapi("CreditNoteLine");

export const CreateCreditNote = z
	.strictObject({
		amount: positiveMoney
			.optional()
			.openapi({ example: 25, description: "The amount to credit; give either this or lines." }),
		lines: z
			.array(
				z.strictObject({
					description: z.string().trim().min(1).max(500),
					amount: positiveMoney.openapi({ example: 12.5 }),
				}),
			)
			.min(1)
			.max(100)
			.optional()
			.openapi({ description: "What is credited, line by line; give either this or amount." }),
		reason: z.enum(CREDIT_NOTE_REASONS),
		memo: z.string().max(2000).optional().openapi({ example: "Agreed with the customer on 2026-12-02." }),
		refund: z
			.boolean()
			.optional()
			.openapi({
				description:
					"What the credit note takes beyond what is still due: true refunds it (a payment of kind refund, " +
					"negative), up to what the invoice's payments brought in; false, the default, gives it back as a " +
					"credit grant of the account, as is what prepaid credits covered in any case.",
			}),
	})
	.superRefine((input, ctx) => {
		const given = (input.amount !== undefined ? 1 : 0) + (input.lines !== undefined ? 1 : 0);
		if (given !== 1) {
			ctx.addIssue({
				code: "custom",
				path: [input.amount === undefined ? "amount" : "lines"],
				message: "Give exactly one of amount and lines.",
			});
		}
	})
	.openapi("CreateCreditNote");

export type CreateCreditNoteInput = z.infer<typeof CreateCreditNote>;

export const CreditNote = z
	.object({
		id: z.string().openapi({ example: "cn_01jd0000000000000000000000" }),
		number: z.string().openapi({ example: "CN-000001", description: "Sequential per environment." }),
		invoice_id: z.string(),
		account_id: z.string(),
		currency: z.string().openapi({ example: "USD" }),
		amount: z.number().openapi({ example: 25, description: "The sum of the lines." }),
		reason: z.enum(CREDIT_NOTE_REASONS),
		memo: z.string().nullable(),
		lines: z.array(CreditNoteLine),
		applied: z
			.object({
				to_invoice: z.number().openapi({ description: "Taken off what was still unpaid of the invoice." }),
				refunded: z.number().openapi({ description: "Refunded: a payment of kind refund, negative." }),
				credited: z.number().openapi({ description: "Given back as a credit grant of the account." }),
			})
			.openapi({ description: "Where the amount went; the three add up to it." }),
		created_at: z.string(),
	})
	.openapi("CreditNote");

export const ListCreditNotesQuery = z.strictObject({
	...pageQuery,
	account_id: z.string().min(1).optional(),
	invoice_id: z.string().min(1).optional(),
});

export const CreditNoteParams = z.object({ credit_note_id: z.string() });
export const InvoiceParams = z.object({ invoice_id: z.string() });
