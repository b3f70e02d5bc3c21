import { exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ADMIN_KEY, createKey, expectError, get } from "../helpers";
import { creditNote, openInvoice, paidInvoice } from "./fixtures";

async function pdf(path: string, key: string = ADMIN_KEY) {
	const response = await exports.default.fetch(
		new Request(`https://billing.test${path}`, { headers: { Authorization: `Bearer ${key}` } }),
	);
	return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

describe("GET /v1/credit-notes", () => {
	it("lists newest first, filtered by account or invoice, a page at a time", async () => {
		const first = await paidInvoice(50);
		const second = await openInvoice(80);
		const a = await creditNote(first.id, { amount: 5, reason: "other" });
		const b = await creditNote(first.id, { amount: 6, reason: "other", refund: true });
		const c = await creditNote(second.id, { amount: 7, reason: "duplicate" });

		const byInvoice = await get(`/v1/credit-notes?invoice_id=${first.id}`);
		expect(byInvoice.status).toBe(200);
		expect(byInvoice.body).toEqual({ credit_notes: [b, a], total: 2, limit: 20, offset: 0 });
		const byAccount = await get(`/v1/credit-notes?account_id=${second.account_id}`);
		expect(byAccount.body.credit_notes).toEqual([c]);
		const page = await get(`/v1/credit-notes?invoice_id=${first.id}&limit=1&offset=1`);
		expect(page.body).toEqual({ credit_notes: [a], total: 2, limit: 1, offset: 1 });

		const invoice = (await get(`/v1/invoices/${first.id}`)).body;
		expect(invoice.credit_notes).toEqual([a.id, b.id]);
		const listed = (await get(`/v1/invoices?account_id=${first.account_id}`)).body.invoices;
		expect(listed[0]).toMatchObject({ id: first.id, credit_notes: [a.id, b.id], amount_credited: 11 });
	});

	it.each(["limit=0", "limit=101", "offset=-1", "status=open", "limit=1e2"])("400 for %s", async (query) => {
		expectError(await get(`/v1/credit-notes?${query}`), 400, "validation_error");
	});

	it("shows nothing of the other environment", async () => {
		const invoice = await openInvoice(10);
		await creditNote(invoice.id, { amount: 1, reason: "other" });
		const testKey = await createKey("read-only", "test");
		const response = await get(`/v1/credit-notes?invoice_id=${invoice.id}`, { key: testKey });
		expect(response.body).toMatchObject({ credit_notes: [], total: 0 });
	});
});

describe("GET /v1/credit-notes/{credit_note_id}", () => {
	it("answers the credit note to a read-only key; 404 when unknown or of the other environment", async () => {
		const invoice = await openInvoice(10);
		const note = await creditNote(invoice.id, { amount: 1, reason: "other", memo: "m" });
		const readOnly = await createKey("read-only");
		expect((await get(`/v1/credit-notes/${note.id}`, { key: readOnly })).body).toEqual(note);
		expectError(await get("/v1/credit-notes/cn_01jd0000000000000000000000"), 404, "not_found");
		expectError(
			await get(`/v1/credit-notes/${note.id}`, { key: await createKey("read-only", "test") }),
			404,
			"not_found",
		);
		expectError(await get(`/v1/credit-notes/${note.id}`, { key: await createKey("sdk") }), 403, "forbidden");
	});
});

describe("GET /v1/credit-notes/{credit_note_id}/pdf", () => {
	it("answers a PDF named after the credit note, with its fonts embedded", async () => {
		const invoice = await openInvoice(10);
		const note = await creditNote(invoice.id, { amount: 2.5, reason: "other" });
		const { response, bytes } = await pdf(`/v1/credit-notes/${note.id}/pdf`);
		expect(response.status).toBe(200);
		expect(response.headers.get("Content-Type")).toBe("application/pdf");
		expect(response.headers.get("Content-Disposition")).toBe(`inline; filename="${note.number}.pdf"`);
		const text = new TextDecoder("latin1").decode(bytes);
		expect(text.startsWith("%PDF-1.")).toBe(true);
		expect(text).toContain("/ToUnicode");
		expectError(await get("/v1/credit-notes/cn_01jd0000000000000000000000/pdf"), 404, "not_found");
	});
});
