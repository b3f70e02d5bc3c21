/**
 * On an invoice's page (docs/credit-notes.md): its credit notes with their PDFs and a form to issue one; on a
 * draft, adding a one-off line and finalizing it.
 */
import type { PageContext } from "../context";
import { h } from "../dom";
import { money } from "../format";
import type { CreditNote, Invoice, List } from "../types";
import { field, ident, runInto, section, table, when } from "../ui";

const REASONS = [
	"billing_error",
	"duplicate",
	"fraudulent",
	"order_change",
	"product_unsatisfactory",
	"other",
];

/** Opens a PDF the API answers (it wants the key as a header, so it is fetched and handed over as a blob). */
function pdfButton(ctx: PageContext, path: string, label: string, slot: Element): HTMLElement {
	const button = h("button", { type: "button", class: "link-button" }, label);
	button.addEventListener("click", () =>
		runInto(slot, button, async () => {
			const url = URL.createObjectURL(await ctx.api.blob(path, ctx.signal));
			window.open(url, "_blank", "noopener");
			setTimeout(() => URL.revokeObjectURL(url), 60_000);
			return null;
		}),
	);
	return button;
}

export async function creditNotesSection(ctx: PageContext, invoice: Invoice): Promise<HTMLElement> {
	const notes = await ctx.api.get<List<"credit_notes", CreditNote>>(
		"/credit-notes",
		{ invoice_id: invoice.id, limit: 100 },
		ctx.signal,
	);
	const result = h("div", { "aria-live": "polite" });
	const format = (amount: number) => money(amount, invoice.currency);
	return section(
		"Credit notes",
		h(
			"p",
			{ class: "credited", "data-value": invoice.amount_credited },
			`Credited ${format(invoice.amount_credited)} of ${format(invoice.amount)}`,
		),
		table(
			["number", "issued", "reason", "amount", "off the invoice", "refunded", "as credit", "document"],
			notes.credit_notes.map((note) => [
				ident(note.number),
				when(note.created_at),
				note.reason.replaceAll("_", " "),
				h("span", { class: "num" }, format(note.amount)),
				h("span", { class: "num" }, format(note.applied.to_invoice)),
				h("span", { class: "num" }, format(note.applied.refunded)),
				h("span", { class: "num" }, format(note.applied.credited)),
				pdfButton(ctx, `/credit-notes/${note.id}/pdf`, `${note.number} PDF`, result),
			]),
			"No credit note on this invoice.",
		),
		result,
		invoice.status === "open" || invoice.status === "paid" ? creditNoteForm(ctx, invoice) : null,
	);
}

/** Lines written one a line, "description; amount". */
function parseLines(text: string): { description: string; amount: number }[] {
	return text
		.split("\n")
		.map((line) => line.trim())
		.filter(Boolean)
		.map((line) => {
			const cut = line.lastIndexOf(";");
			return { description: line.slice(0, cut).trim(), amount: Number(line.slice(cut + 1).trim()) };
		});
}

function creditNoteForm(ctx: PageContext, invoice: Invoice): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const amount = h("input", {
		name: "amount",
		type: "number",
		step: "any",
		min: "0",
		placeholder: "e.g. 25",
	});
	const lines = h("textarea", {
		name: "lines",
		rows: 3,
		placeholder: "Duplicate tokens of the 12th; 20\nGoodwill; 5",
	});
	const reason = h(
		"select",
		{ name: "reason" },
		REASONS.map((r) => h("option", { value: r }, r.replaceAll("_", " "))),
	);
	const memo = h("input", { name: "memo", maxlength: 2000, placeholder: "optional" });
	const refund = h("input", { name: "refund", type: "checkbox" });
	const submit = h("button", { type: "submit", class: "primary" }, "Issue credit note");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Issue a credit note" },
		field("Amount", amount, "or lines below"),
		field("Lines (description; amount)", lines),
		field("Reason", reason),
		field("Memo", memo),
		field("Refund the rest (else give it back as credit)", refund),
		submit,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const body: Record<string, unknown> = { reason: reason.value, refund: refund.checked };
		if (lines.value.trim()) body.lines = parseLines(lines.value);
		if (amount.value.trim()) body.amount = Number(amount.value);
		if (memo.value.trim()) body.memo = memo.value.trim();
		void runInto(result, submit, async () => {
			const note = await ctx.api.post<CreditNote>(`/invoices/${invoice.id}/credit-notes`, body);
			ctx.refresh();
			return h("p", { class: "ok" }, `Issued ${note.number}.`);
		});
	});
	return h("div", null, h("h3", null, "Issue a credit note"), form, result);
}

/** A draft: add a one-off line, or finalize it now. */
export function draftActions(ctx: PageContext, invoice: Invoice): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const description = h("input", {
		name: "description",
		required: true,
		maxlength: 500,
		placeholder: "Setup fee",
	});
	const amount = h("input", {
		name: "amount",
		type: "number",
		step: "any",
		required: true,
		placeholder: "e.g. 450",
	});
	const add = h("button", { type: "submit" }, "Add line");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Add a one-off line" },
		field("Description", description),
		field("Amount", amount, "negative for a deduction"),
		add,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		void runInto(result, add, async () => {
			await ctx.api.post(`/invoices/${invoice.id}/lines`, {
				description: description.value,
				amount: Number(amount.value),
			});
			ctx.refresh();
			return null;
		});
	});
	const finalize = h("button", { type: "button", class: "primary" }, "Finalize now");
	finalize.addEventListener("click", () =>
		runInto(result, finalize, async () => {
			await ctx.api.post(`/invoices/${invoice.id}/finalize`);
			ctx.refresh();
			return null;
		}),
	);
	return section(
		"Draft",
		h(
			"p",
			{ class: "muted" },
			"Late usage of the period updates this draft until it is finalized; one-off lines are billed once.",
		),
		form,
		h("div", { class: "actions" }, finalize),
		result,
	);
}
