import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { creditNote, openInvoice } from "../credit-notes/fixtures";
import { createAccount, expectError, post } from "../helpers";
import { createPlan, currentPeriod, generate, instanceKey, subscribe } from "../invoicing/fixtures";
import { mint, portalGet } from "./fixtures";

// The portal shows the account's credit notes (with their PDFs) and never its drafts.
describe("credit notes in the customer portal", () => {
	it("lists the account's credit notes, filtered by invoice, and serves their PDFs; another account's are 404", async () => {
		const invoice = await openInvoice(40);
		const note = await creditNote(invoice.id, { amount: 15, reason: "billing_error" });
		const other = await openInvoice(40);
		const otherNote = await creditNote(other.id, { amount: 5, reason: "other" });
		const { token } = await mint(invoice.account_id);

		const listed = await portalGet("/credit-notes", token);
		expect(listed.status).toBe(200);
		expect(listed.body).toEqual({ credit_notes: [note], total: 1, limit: 20, offset: 0 });
		const byInvoice = await portalGet(`/credit-notes?invoice_id=${invoice.id}`, token);
		expect(byInvoice.body.credit_notes).toEqual([note]);
		const detail = await portalGet(`/invoices/${invoice.id}`, token);
		expect(detail.body).toMatchObject({ credit_notes: [note.id], amount_credited: 15, amount_due: 25 });

		const pdf = await exports.default.fetch(
			new Request(`https://billing.test/portal/api/credit-notes/${note.id}/pdf`, {
				headers: { Authorization: `Bearer ${token}` },
			}),
		);
		expect(pdf.status).toBe(200);
		expect(pdf.headers.get("Content-Type")).toBe("application/pdf");
		expect(
			new TextDecoder("latin1").decode(new Uint8Array(await pdf.arrayBuffer())).startsWith("%PDF-"),
		).toBe(true);
		expectError(await portalGet(`/credit-notes/${otherNote.id}/pdf`, token), 404, "not_found");
		expectError(await portalGet("/credit-notes?limit=0", token), 400, "validation_error");
		expectError(await portalGet("/credit-notes", null), 401, "unauthorized");
	});

	it("never shows a draft invoice", async () => {
		const account = await createAccount(undefined, { invoice_grace_days: 5 });
		const plan = await createPlan({ base_fee: 12, charges: [] });
		await subscribe(account.id, plan.id, [instanceKey()]);
		const { invoices } = await generate(currentPeriod(), account.id);
		const draft = invoices[0] as (typeof invoices)[number];
		expect(draft.status).toBe("draft");
		const { token } = await mint(account.id);
		expect((await portalGet("/invoices", token)).body).toMatchObject({ invoices: [], total: 0 });
		expectError(await portalGet(`/invoices/${draft.id}`, token), 404, "not_found");
		expect((await post(`/v1/invoices/${draft.id}/finalize`)).status).toBe(200);
		expect((await portalGet("/invoices", token)).body.total).toBe(1);
	});
});
