/**
 * Black-box checks of §37's portal and document amendments (§28, §20/§26), from the contract's text and
 * docs/portal.md / docs/credit-notes.md alone: the portal's API shows the account's credit notes and payments with
 * their kind, names charges by their descriptions, and the invoice PDF shows its credit notes and refunds as lines
 * whose figures add up on the page. PDFs are read with ./pdf-text (pdftotext cannot run inside workerd).
 */
import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { creditNote, openInvoice, paidInvoice } from "../credit-notes/fixtures";
import { ADMIN_KEY, createAccount, post } from "../helpers";
import { actions, createPlan, instanceKey, sendActions, subscribe } from "../invoicing/fixtures";
import { mint, portalGet } from "../portal/fixtures";
import { pdfLines } from "./pdf-text";

async function pdfOf(path: string, key: string) {
	const response = await exports.default.fetch(
		new Request(`https://billing.test${path}`, { headers: { Authorization: `Bearer ${key}` } }),
	);
	expect(response.status, path).toBe(200);
	expect(response.headers.get("Content-Type")).toBe("application/pdf");
	return pdfLines(new Uint8Array(await response.arrayBuffer()));
}

const lineMatching = (lines: string[], pattern: RegExp) => lines.find((line) => pattern.test(line));

describe("§37 (§28): the portal shows the account's credit notes", () => {
	it("lists each credit note with number, invoice, amount and reason, and serves its PDF", async () => {
		const invoice = await openInvoice(80);
		const note = await creditNote(invoice.id, { amount: 12.5, reason: "product_unsatisfactory" });
		const { token } = await mint(invoice.account_id);

		const listed = await portalGet("/credit-notes", token);
		expect(listed.status, JSON.stringify(listed.body)).toBe(200);
		expect(listed.body.total).toBe(1);
		expect(listed.body.credit_notes[0]).toMatchObject({
			id: note.id,
			number: note.number,
			invoice_id: invoice.id,
			amount: 12.5,
			reason: "product_unsatisfactory",
		});
		// Beside its invoice: the invoice view names its credit notes and the amount they took.
		const detail = await portalGet(`/invoices/${invoice.id}`, token);
		expect(detail.body).toMatchObject({ credit_notes: [note.id], amount_credited: 12.5, amount_due: 67.5 });

		const text = (await pdfOf(`/portal/api/credit-notes/${note.id}/pdf`, token)).join("\n");
		expect(text).toContain(note.number);
		expect(text).toContain(invoice.number);
		expect(text).toMatch(/USD 12\.50/);
	});

	it("portal payments carry kind: the payment and the refund of a credit note", async () => {
		const invoice = await paidInvoice(60);
		await creditNote(invoice.id, { amount: 10, reason: "duplicate", refund: true });
		const { token } = await mint(invoice.account_id);
		const payments = await portalGet("/payments", token);
		expect(payments.status, JSON.stringify(payments.body)).toBe(200);
		const kinds = (payments.body.payments as { kind: string; amount: number }[])
			.map((p) => [p.kind, p.amount])
			.sort();
		expect(kinds).toEqual([
			["payment", 60],
			["refund", -10],
		]);
		const detail = await portalGet(`/invoices/${invoice.id}`, token);
		expect((detail.body.payments as { kind: string }[]).map((p) => p.kind).sort()).toEqual([
			"payment",
			"refund",
		]);
	});
});

describe("§37 (§28): the portal names charges by their descriptions and shows the period's amount once", () => {
	it("each charge of the overview carries its plan description; amount so far agrees with pending usage", async () => {
		const plan = await createPlan({
			base_fee: 5,
			charges: [
				{
					metric: "llm_calls",
					description: "Language model calls",
					source: { kind: "action", type: "llm_call", aggregate: "count" },
					model: "per_unit",
					unit_price: 0.25,
				},
			],
		});
		const account = await createAccount();
		const agentKey = instanceKey();
		const subscription = await subscribe(account.id, plan.id, [agentKey]);
		await sendActions(actions(agentKey, "llm_call", 4));
		const { token } = await mint(account.id);

		const overview = await portalGet("/overview", token);
		expect(overview.status, JSON.stringify(overview.body)).toBe(200);
		const sub = overview.body.subscriptions.find((s: { id: string }) => s.id === subscription.id);
		const usageCharge = sub.charges.find((c: { metric: string }) => c.metric === "llm_calls");
		expect(usageCharge, JSON.stringify(sub.charges)).toMatchObject({ quantity: 4, amount: 1 });
		// The names come beside the charges, by metric (docs/portal.md): what the invoice will call each charge.
		expect(sub.charge_descriptions.llm_calls).toBe("Language model calls");
		for (const charge of sub.charges) {
			const name = sub.charge_descriptions[charge.metric];
			expect(typeof name, JSON.stringify(charge)).toBe("string");
			expect(name.length).toBeGreaterThan(0);
			expect(name).not.toBe(charge.metric);
		}
		expect(sub.amount_so_far).toBe(6);
		// One figure for the period: the credit section's accrued amount does not disagree with it.
		if (overview.body.credits?.pending_usage !== undefined) {
			expect(overview.body.credits.pending_usage).toBe(6);
		}
	});
});

describe("§37 (§20/§26): the invoice PDF shows credit notes and refunds so the figures add up", () => {
	it("an open invoice with a credit note: its number and amount on one line, amount due net of it", async () => {
		const invoice = await openInvoice(100);
		const note = await creditNote(invoice.id, { amount: 30, reason: "billing_error" });
		const lines = await pdfOf(`/v1/invoices/${invoice.id}/pdf`, ADMIN_KEY);
		const text = lines.join("\n");
		expect(
			lineMatching(lines, new RegExp(`${note.number}.*USD 30\\.00|USD 30\\.00.*${note.number}`)),
			text,
		).toBeDefined();
		expect(lineMatching(lines, /^Amount due USD 70\.00$/), text).toBeDefined();
		// amount − credits − credit notes = amount due reads on the page.
		expect(lineMatching(lines, /^Subtotal USD 100\.00$/), text).toBeDefined();
		expect(lineMatching(lines, /^Credits applied USD 0\.00$/), text).toBeDefined();
	});

	it("a refunded invoice: the refund is its own line (not a negative payment), remaining 0", async () => {
		const invoice = await paidInvoice(100);
		const note = await creditNote(invoice.id, { amount: 25.5, reason: "duplicate", refund: true });
		const lines = await pdfOf(`/v1/invoices/${invoice.id}/pdf`, ADMIN_KEY);
		const text = lines.join("\n");
		// Its own line, apart from what was paid (docs/billing.md: "Refunded, credit note CN-…").
		const refundLine = lineMatching(lines, /^Refunded/i);
		expect(refundLine, text).toBeDefined();
		expect(refundLine).toMatch(/25\.50/);
		expect(lineMatching(lines, /^Paid -USD/), text).toBeUndefined();
		// The credit note is shown with its number and amount.
		expect(
			lineMatching(lines, new RegExp(`${note.number}.*25\\.50|25\\.50.*${note.number}`)),
			text,
		).toBeDefined();
		// amount due − paid net of refunds − refunded = remaining: 100 − 74.50 − 25.50 = 0.
		expect(lineMatching(lines, /^Amount due USD 100\.00$/), text).toBeDefined();
		expect(lineMatching(lines, /^Amount paid(, net of refunds)? USD 74\.50$/), text).toBeDefined();
		expect(lineMatching(lines, /^Amount remaining USD 0\.00$/), text).toBeDefined();
	});

	it("the portal serves the same invoice PDF, credit notes included", async () => {
		const invoice = await openInvoice(50);
		const note = await creditNote(invoice.id, { amount: 5, reason: "other" });
		const { token } = await mint(invoice.account_id);
		const lines = await pdfOf(`/portal/api/invoices/${invoice.id}/pdf`, token);
		expect(lines.join("\n")).toContain(note.number);
		expect(lineMatching(lines, /^Amount due USD 45\.00$/), lines.join("\n")).toBeDefined();
	});

	it("a paid invoice credited as a grant shows the credit note and still 0 remaining", async () => {
		const invoice = await paidInvoice(40);
		const note = await creditNote(invoice.id, { amount: 40, reason: "order_change" });
		expect(note.applied.credited).toBe(40);
		expect((await post(`/v1/invoices/${invoice.id}/void`)).status).toBe(409);
		const lines = await pdfOf(`/v1/invoices/${invoice.id}/pdf`, ADMIN_KEY);
		expect(lines.join("\n")).toContain(note.number);
		expect(lineMatching(lines, /^Amount remaining USD 0\.00$/), lines.join("\n")).toBeDefined();
	});
});
