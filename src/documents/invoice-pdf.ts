/**
 * The invoice as a printable document (docs/billing.md#invoice-documents-and-payments): pure, invoice in, PDF bytes out, so that it runs in the
 * Worker and in Node alike. pdf-lib writes the PDF (pure JavaScript, no Node APIs, so it runs on Workers);
 * fontkit embeds Inter, so the text is real text a reader can search and copy; only the glyphs the invoice uses
 * go in (font-subsets.ts). A4, one page unless
 * the lines need more: the table continues on the next page under its header again, and the totals follow the
 * last line.
 */
import { PDFDocument, type PDFPage, rgb } from "pdf-lib";
import type { InvoiceView } from "../invoicing/invoices";
import { subsettingFontkit, tagSubsetFonts } from "./font-subsets";
import { formatCount, formatDate, formatMoney, formatPeriod } from "./format";
import { drawTotals, type InvoiceCreditNote, totalsHeight } from "./invoice-totals";
import { ACCENT, BAND, INK, MARGIN, MUTED, PAGE, type Pen, RULE, textRight, wrap } from "./layout";
import { drawPayOnline, payOnlineHeight } from "./pay-online";

export interface InvoiceFonts {
	regular: Uint8Array | ArrayBuffer;
	bold: Uint8Array | ArrayBuffer;
}

export interface InvoiceDocumentOptions {
	/** Who sends the invoice (the Worker variable BILLING_COMPANY_NAME). */
	seller: string;
	fonts: InvoiceFonts;
	/** The invoice's credit notes, each named with its number and amount under the totals. */
	creditNotes?: readonly InvoiceCreditNote[];
}

const STATUS_LABEL = { draft: "DRAFT", open: "OPEN", paid: "PAID", void: "VOID" } as const;
const STATUS_COLOR = {
	draft: MUTED,
	open: ACCENT,
	paid: rgb(0.09, 0.5, 0.27),
	void: rgb(0.7, 0.15, 0.15),
} as const;

/** Table columns: description fills what quantity and amount leave. */
const COLUMNS = { quantityRight: PAGE.width - MARGIN - 130, amountRight: PAGE.width - MARGIN };
const DESCRIPTION_WIDTH = COLUMNS.quantityRight - 90 - MARGIN;

function addressLines(invoice: InvoiceView): string[] {
	const address = invoice.bill_to.billing_address ?? {};
	const cityLine = [address.city, [address.state, address.zip].filter(Boolean).join(" ")]
		.filter(Boolean)
		.join(", ");
	return [address.street, cityLine, address.country].filter((line): line is string => Boolean(line));
}

/** The header of the first page: seller, title, invoice facts, bill-to. Returns where the table starts. */
function drawHeading(page: PDFPage, pen: Pen, invoice: InvoiceView, seller: string): number {
	let y = PAGE.height - MARGIN - 8;
	page.drawText(seller, { x: MARGIN, y, size: 16, font: pen.bold, color: INK });
	textRight(page, "INVOICE", PAGE.width - MARGIN, y - 2, pen.bold, 24, ACCENT);
	page.drawText("Usage-based billing", { x: MARGIN, y: y - 16, size: 9, font: pen.regular, color: MUTED });

	y -= 58;
	page.drawLine({
		start: { x: MARGIN, y: y + 20 },
		end: { x: PAGE.width - MARGIN, y: y + 20 },
		thickness: 0.75,
		color: RULE,
	});

	// Bill to, on the left.
	page.drawText("BILL TO", { x: MARGIN, y, size: 8, font: pen.bold, color: MUTED });
	let left = y - 16;
	page.drawText(invoice.bill_to.name, { x: MARGIN, y: left, size: 11, font: pen.bold, color: INK });
	for (const line of [invoice.bill_to.email, ...addressLines(invoice)]) {
		left -= 14;
		page.drawText(line, { x: MARGIN, y: left, size: 9.5, font: pen.regular, color: INK });
	}

	// The invoice's facts, on the right.
	const facts: [string, string][] = [
		["Invoice number", invoice.number ?? "Draft (not numbered yet)"],
		["Issue date", formatDate(invoice.issued_at)],
		["Due date", formatDate(invoice.due_at)],
		["Billing period", formatPeriod(invoice.billing_period)],
		[
			"Service period",
			`${invoice.period_start.slice(0, 10)} to ${new Date(Date.parse(invoice.period_end) - 1).toISOString().slice(0, 10)}`,
		],
	];
	if (invoice.kind === "supplementary") facts.push(["Kind", "Supplementary"]);
	// docs/currencies.md: the stored rate the lines were converted at, as created.
	const rate = invoice.exchange_rate;
	if (rate) {
		facts.push(["Exchange rate", `1 ${rate.base} = ${rate.rate} ${rate.quote}`]);
		facts.push(["Rate effective", formatDate(rate.effective_at)]);
	}
	let right = y;
	const labelX = PAGE.width - MARGIN - 230;
	for (const [label, value] of facts) {
		page.drawText(label, { x: labelX, y: right, size: 9, font: pen.regular, color: MUTED });
		textRight(page, value, PAGE.width - MARGIN, right, pen.bold, 9.5);
		right -= 15;
	}
	// Status as a small badge under the facts.
	const status = STATUS_LABEL[invoice.status];
	const badgeWidth = pen.bold.widthOfTextAtSize(status, 8.5) + 14;
	page.drawRectangle({
		x: PAGE.width - MARGIN - badgeWidth,
		y: right - 4.5,
		width: badgeWidth,
		height: 15,
		borderColor: STATUS_COLOR[invoice.status],
		borderWidth: 1,
	});
	textRight(page, status, PAGE.width - MARGIN - 7, right, pen.bold, 8.5, STATUS_COLOR[invoice.status]);
	page.drawText("Status", { x: labelX, y: right, size: 9, font: pen.regular, color: MUTED });

	return Math.min(left, right) - 34;
}

function drawTableHeader(page: PDFPage, pen: Pen, y: number, currency: string): number {
	page.drawRectangle({ x: MARGIN, y: y - 7, width: PAGE.width - 2 * MARGIN, height: 22, color: BAND });
	page.drawText("DESCRIPTION", { x: MARGIN + 8, y, size: 8, font: pen.bold, color: MUTED });
	textRight(page, "QUANTITY", COLUMNS.quantityRight, y, pen.bold, 8, MUTED);
	textRight(page, `AMOUNT (${currency})`, COLUMNS.amountRight - 8, y, pen.bold, 8, MUTED);
	return y - 28;
}

function drawFooter(
	page: PDFPage,
	pen: Pen,
	invoice: InvoiceView,
	seller: string,
	index: number,
	count: number,
) {
	const y = MARGIN - 20;
	page.drawLine({
		start: { x: MARGIN, y: y + 14 },
		end: { x: PAGE.width - MARGIN, y: y + 14 },
		thickness: 0.5,
		color: RULE,
	});
	page.drawText(`${seller} · ${invoice.number ?? "Draft"}`, {
		x: MARGIN,
		y,
		size: 8,
		font: pen.regular,
		color: MUTED,
	});
	textRight(page, `Page ${index + 1} of ${count}`, PAGE.width - MARGIN, y, pen.regular, 8, MUTED);
}

export async function renderInvoicePdf(
	invoice: InvoiceView,
	options: InvoiceDocumentOptions,
): Promise<Uint8Array> {
	const { doc, pen } = await startDocument(options, {
		title: `Invoice ${invoice.number ?? "draft"}`,
		subject: `Invoice ${invoice.number ?? "draft"} for ${formatPeriod(invoice.billing_period)}`,
		date: invoice.issued_at,
	});

	const bottom = MARGIN + 24;
	let page = doc.addPage([PAGE.width, PAGE.height]);
	let y = drawTableHeader(page, pen, drawHeading(page, pen, invoice, options.seller), invoice.currency);
	const size = 9.5;
	const leading = 13;

	const newPage = () => {
		page = doc.addPage([PAGE.width, PAGE.height]);
		y = drawTableHeader(page, pen, PAGE.height - MARGIN - 10, invoice.currency);
	};

	if (invoice.line_items.length === 0) {
		page.drawText("No charges in this period.", { x: MARGIN + 8, y, size, font: pen.regular, color: MUTED });
		y -= leading + 10;
	}
	// Each row: its text, then 8 points of air, a hairline, and 12 points before the next row's first baseline.
	let firstOnPage = true;
	for (const line of invoice.line_items) {
		// A converted line says what it was before conversion (docs/currencies.md).
		const converted =
			line.original_currency !== undefined && line.original_currency !== invoice.currency
				? ` (${formatMoney(line.original_amount, line.original_currency)} before conversion)`
				: "";
		const text = wrap(line.description + converted, pen.regular, size, DESCRIPTION_WIDTH);
		const height = (text.length - 1) * leading + 24;
		if (y - height < bottom) {
			newPage();
			firstOnPage = true;
		}
		if (!firstOnPage) {
			page.drawLine({
				start: { x: MARGIN, y: y + 13 },
				end: { x: PAGE.width - MARGIN, y: y + 13 },
				thickness: 0.5,
				color: RULE,
			});
		}
		text.forEach((part, i) => {
			page.drawText(part, { x: MARGIN + 8, y: y - i * leading, size, font: pen.regular, color: INK });
		});
		textRight(page, formatCount(line.quantity), COLUMNS.quantityRight, y, pen.regular, size);
		textRight(
			page,
			formatMoney(line.amount, invoice.currency),
			COLUMNS.amountRight - 8,
			y,
			pen.regular,
			size,
		);
		y -= height;
		firstOnPage = false;
	}
	page.drawLine({
		start: { x: MARGIN, y: y + 13 },
		end: { x: PAGE.width - MARGIN, y: y + 13 },
		thickness: 0.75,
		color: INK,
	});

	// Totals, right-aligned under the amounts, and how it was settled; they never split across pages.
	const notes = options.creditNotes ?? [];
	if (y - totalsHeight(invoice, notes) - payOnlineHeight(pen, invoice) < bottom) newPage();
	drawPayOnline(page, pen, invoice, drawTotals(page, pen, invoice, notes, y - 6));

	const pages = doc.getPages();
	for (const [i, p] of pages.entries()) drawFooter(p, pen, invoice, options.seller, i, pages.length);
	return finishDocument(doc, pen);
}

/** A new document in the invoices' style: both faces embedded as subsets, and who made it, about what, when. */
export async function startDocument(
	options: InvoiceDocumentOptions,
	about: { title: string; subject: string; date: string },
): Promise<{ doc: PDFDocument; pen: Pen }> {
	const doc = await PDFDocument.create();
	doc.registerFontkit(subsettingFontkit);
	const pen: Pen = {
		regular: await doc.embedFont(options.fonts.regular, { subset: true }),
		bold: await doc.embedFont(options.fonts.bold, { subset: true }),
	};
	doc.setTitle(about.title);
	doc.setAuthor(options.seller);
	doc.setSubject(about.subject);
	doc.setCreator(options.seller);
	doc.setProducer("pdf-lib");
	doc.setCreationDate(new Date(about.date));
	doc.setModificationDate(new Date(about.date));
	return { doc, pen };
}

/** The bytes of a document begun by startDocument, its font subsets named as PDF requires. */
export function finishDocument(doc: PDFDocument, pen: Pen): Promise<Uint8Array> {
	tagSubsetFonts([pen.regular, pen.bold]);
	// Plain cross-reference objects (no object streams): older PDF readers and mail scanners read them all.
	return doc.save({ useObjectStreams: false });
}
