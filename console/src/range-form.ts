import { hashOf, type PageContext } from "./context";
import { type DateRange, rangeProblem } from "./dates";
import { fill, formValues, h } from "./dom";
import { field } from "./ui";

/** ISO 4217 codes the browser knows, or a short list where it cannot tell. */
function currencyCodes(current: string): string[] {
	let codes: string[];
	try {
		codes = Intl.supportedValuesOf("currency");
	} catch {
		codes = ["AUD", "BRL", "CAD", "CHF", "CNY", "EUR", "GBP", "INR", "JPY", "MXN", "SEK", "USD"];
	}
	return codes.includes(current) ? codes : [...codes, current].sort();
}

export function currencySelect(current: string, name = "currency"): HTMLSelectElement {
	return h(
		"select",
		{ name, required: true },
		currencyCodes(current).map((code) => h("option", { value: code, selected: code === current }, code)),
	);
}

/**
 * The date range (both days included, UTC) and currency a report page shows; kept in the page's hash. A range
 * that starts after it ends is answered here, once, and never sent to the API.
 */
export function rangeForm(
	ctx: PageContext,
	path: string,
	range: DateRange,
	extra: Record<string, string> = {},
): HTMLFormElement {
	const problem = rangeProblem(range);
	const problemSlot = h("div", { class: "range-problem", "aria-live": "polite" });
	const start = h("input", { type: "date", name: "start", value: range.start, required: true });
	const end = h("input", { type: "date", name: "end", value: range.end, required: true });
	const showProblem = (text: string | null) => {
		for (const input of [start, end]) {
			if (text) input.setAttribute("aria-invalid", "true");
			else input.removeAttribute("aria-invalid");
		}
		fill(problemSlot, text && h("p", { class: "error", role: "alert", "data-error-code": "range" }, text));
	};
	const form = h(
		"form",
		{ class: "range", "aria-label": "Date range" },
		field("From", start),
		field("To (inclusive)", end),
		field("Currency", currencySelect(range.currency)),
		h("button", { type: "submit" }, "Show"),
		problemSlot,
	);
	showProblem(problem);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		const wrong = rangeProblem({ start: values.start ?? "", end: values.end ?? "" });
		showProblem(wrong);
		if (wrong) {
			start.focus();
			return;
		}
		ctx.go(
			hashOf(path, {
				...extra,
				start: values.start,
				end: values.end,
				currency: values.currency?.toUpperCase(),
			}),
		);
	});
	return form;
}
