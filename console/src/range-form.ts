import { hashOf, type PageContext } from "./context";
import type { DateRange } from "./dates";
import { formValues, h } from "./dom";
import { field } from "./ui";

/** The date range (both days included, UTC) and currency a report page shows; kept in the page's hash. */
export function rangeForm(
	ctx: PageContext,
	path: string,
	range: DateRange,
	extra: Record<string, string> = {},
): HTMLFormElement {
	const form = h(
		"form",
		{ class: "range", "aria-label": "Date range" },
		field("From", h("input", { type: "date", name: "start", value: range.start, required: true })),
		field("To (inclusive)", h("input", { type: "date", name: "end", value: range.end, required: true })),
		field(
			"Currency",
			h("input", {
				name: "currency",
				value: range.currency,
				pattern: "[A-Za-z]{3}",
				size: 4,
				maxlength: 3,
				required: true,
			}),
		),
		h("button", { type: "submit" }, "Show"),
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
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
