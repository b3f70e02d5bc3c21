/** Widgets every page uses: error boxes in the API's words, pagers, confirmations, secrets shown once. */
import { ApiFailure, type Page } from "./api";
import { type Child, fill, h } from "./dom";
import { dateTime } from "./format";

/** An error as a reader can act on it: the API's message, then its status, code and request id. */
export function errorBox(error: unknown): HTMLElement {
	if (error instanceof ApiFailure) {
		return h(
			"div",
			{ class: "error", role: "alert", "data-error-code": error.code },
			h("strong", { class: "error-message" }, error.message),
			error.details.length > 0 &&
				h(
					"ul",
					null,
					error.details.map((d) => h("li", null, h("code", null, d.path), ": ", d.message)),
				),
			h(
				"div",
				{ class: "error-meta" },
				error.status ? `HTTP ${error.status} · ${error.code}` : error.code,
				error.requestId && [" · request id ", h("code", { class: "request-id" }, error.requestId)],
			),
		);
	}
	const message = error instanceof Error ? error.message : String(error);
	return h("div", { class: "error", role: "alert" }, h("strong", { class: "error-message" }, message));
}

export function loading(what = "Loading…"): HTMLElement {
	return h("p", { class: "muted loading" }, what);
}

export function section(title: string, ...children: Child[]): HTMLElement {
	return h("section", { class: "card" }, h("h2", null, title), ...children);
}

export function table(headers: string[], rows: Child[][], empty = "Nothing here yet."): HTMLElement {
	if (rows.length === 0) return h("p", { class: "muted empty" }, empty);
	// A wide table scrolls inside its card instead of widening the page.
	return h("div", { class: "table-wrap" }, grid(headers, rows));
}

function grid(headers: string[], rows: Child[][]): HTMLElement {
	return h(
		"table",
		null,
		h(
			"thead",
			null,
			h(
				"tr",
				null,
				headers.map((label) => h("th", { scope: "col" }, label)),
			),
		),
		h(
			"tbody",
			null,
			// data-label lets a narrow screen show each row as a card of "label: value" lines.
			rows.map((cells) =>
				h(
					"tr",
					null,
					cells.map((cell, i) => h("td", { "data-label": headers[i] ?? "" }, cell)),
				),
			),
		),
	);
}

/** An identifier or a period ("CN-000005", "INV-000042", "2026-11"): it never breaks across lines. */
export function ident(content: Child, cls = ""): HTMLElement {
	return h("span", { class: `ident ${cls}`.trim() }, content);
}

export function badge(text: string): HTMLElement {
	return h("span", { class: `badge badge-${text.replace(/[^a-z-]/g, "")}` }, text);
}

export function pager(page: Page, go: (offset: number) => void): HTMLElement | null {
	if (page.total <= page.limit && page.offset === 0) return null;
	const last = Math.min(page.offset + page.limit, page.total);
	return h(
		"nav",
		{ class: "pager", "aria-label": "Pages" },
		h(
			"button",
			{
				type: "button",
				disabled: page.offset === 0,
				onclick: () => go(Math.max(0, page.offset - page.limit)),
			},
			"← Newer",
		),
		h("span", null, `${page.total === 0 ? 0 : page.offset + 1}–${last} of ${page.total}`),
		h(
			"button",
			{ type: "button", disabled: last >= page.total, onclick: () => go(page.offset + page.limit) },
			"Older →",
		),
	);
}

/**
 * Asks before something that cannot be undone; resolves true only on the explicit confirm button. The dialog
 * belongs to the page that opened it: leaving the page (`signal` aborts: Back, a link, a new hash) closes it as a
 * cancel, so that a confirmation can never act on what another page shows.
 */
export function confirmAction(message: string, confirmLabel: string, signal: AbortSignal): Promise<boolean> {
	return new Promise((resolve) => {
		if (signal.aborted) {
			resolve(false);
			return;
		}
		const dialog = h(
			"dialog",
			{ class: "confirm", "aria-label": confirmLabel },
			h(
				"form",
				{ method: "dialog" },
				h("p", null, message),
				h(
					"div",
					{ class: "actions" },
					h("button", { value: "cancel", type: "submit" }, "Cancel"),
					h("button", { value: "confirm", type: "submit", class: "danger" }, confirmLabel),
				),
			),
		);
		const leave = () => {
			dialog.returnValue = "cancel";
			dialog.close();
			dialog.remove();
			resolve(false);
		};
		signal.addEventListener("abort", leave, { once: true });
		dialog.addEventListener("close", () => {
			signal.removeEventListener("abort", leave);
			resolve(dialog.returnValue === "confirm" && !signal.aborted);
			dialog.remove();
		});
		document.body.append(dialog);
		dialog.showModal();
	});
}

/** A secret the API returns once: shown with a copy button until the reader dismisses it. */
export function secretOnce(
	title: string,
	secret: string,
	onDismiss: () => void,
	...notes: Child[]
): HTMLElement {
	const status = h("span", { class: "muted", role: "status" });
	const copy = async () => {
		try {
			await navigator.clipboard.writeText(secret);
			status.textContent = "Copied.";
		} catch {
			status.textContent = "Copying is not allowed here: select the text and copy it.";
		}
	};
	return h(
		"div",
		{ class: "secret-once", role: "region", "aria-label": title },
		h("h3", null, title),
		h("p", null, "This is the only time it is shown. Store it now; it cannot be retrieved later."),
		h(
			"div",
			{ class: "secret-row" },
			h("code", { class: "secret" }, secret),
			h("button", { type: "button", class: "copy", onclick: copy }, "Copy"),
			status,
		),
		...notes,
		h("button", { type: "button", class: "dismiss", onclick: onDismiss }, "I have stored it"),
	);
}

/**
 * A button that runs an API call: disabled while it runs (no double submits), the outcome written into `slot`
 * (an error in the API's words, or what `done` returns).
 */
export function runInto(
	slot: Element,
	button: HTMLButtonElement | null,
	work: () => Promise<Child>,
): Promise<void> {
	if (button) button.disabled = true;
	fill(slot);
	return work()
		.then((result) => fill(slot, result))
		.catch((error: unknown) => fill(slot, errorBox(error)))
		.finally(() => {
			if (button) button.disabled = false;
		});
}

export function field(label: string, control: HTMLElement, hint?: string): HTMLElement {
	return h("label", { class: "field" }, h("span", null, label), control, hint && h("small", null, hint));
}

export function link(hash: string, text: string, attrs: Record<string, string> = {}): HTMLAnchorElement {
	return h("a", { href: hash, ...attrs }, text);
}

/** A UTC time that does not break across lines in a table cell. */
export function when(iso: string | null): HTMLElement {
	return h("span", { class: "when" }, dateTime(iso));
}

/**
 * Draws what `work` returns into `slot` when it is ready, or the API's error there: one part of a page failing
 * (an endpoint this deployment does not have yet, say) leaves the rest of the page working.
 */
export function fillWhenReady(slot: Element, signal: AbortSignal, work: () => Promise<Child>): Promise<void> {
	fill(slot, loading());
	return work()
		.then((node) => fill(slot, node))
		.catch((error: unknown) => {
			if (!signal.aborted) fill(slot, errorBox(error));
		});
}
