/** The sign-in form: one API key, pasted once, checked against the API before it is kept. */
import { ApiFailure } from "../api";
import { fill, formValues, h } from "../dom";
import { type Identity, identify, SignInError } from "../session";
import { errorBox, field } from "../ui";

export function signInPage(
	root: HTMLElement,
	onSignedIn: (identity: Identity) => void,
	options: { problem?: unknown; current?: Identity } = {},
): void {
	const status = h("div", { class: "sign-in-status", "aria-live": "polite" });
	const input = h("input", {
		name: "key",
		type: "password",
		autocomplete: "off",
		spellcheck: "false",
		required: true,
		placeholder: "sk_api_…",
		"aria-describedby": "key-hint",
	});
	const button = h("button", { type: "submit", class: "primary" }, "Sign in");
	const form = h(
		"form",
		{ class: "sign-in", novalidate: true },
		field("API key", input),
		h(
			"p",
			{ id: "key-hint", class: "muted" },
			"An admin key can do everything here; a read-only or read-write key sees the reports, customers, invoices and agents. The key stays in this tab only (sessionStorage) and is sent to this API as a Bearer header.",
		),
		button,
		options.current && h("a", { href: "#/overview", class: "cancel" }, "Cancel: stay signed in"),
	);
	form.addEventListener("submit", async (event) => {
		event.preventDefault();
		button.disabled = true;
		fill(status, h("p", { class: "muted" }, "Checking the key…"));
		try {
			onSignedIn(await identify(formValues(form).key ?? ""));
		} catch (error) {
			fill(status, signInProblem(error));
		} finally {
			button.disabled = false;
		}
	});
	fill(
		root,
		h(
			"div",
			{ class: "sign-in-page" },
			h("h1", null, "Agent Metering & Billing"),
			h(
				"p",
				null,
				options.current
					? `Signed in with ${options.current.label}. Paste another key to switch.`
					: "Sign in to the console with an API key.",
			),
			form,
			status,
		),
	);
	if (options.problem !== undefined) fill(status, signInProblem(options.problem));
	input.focus();
}

function signInProblem(error: unknown): HTMLElement {
	if (error instanceof SignInError) return errorBox(error);
	const lead =
		error instanceof ApiFailure && error.status === 401
			? "The API did not accept this key."
			: "Signing in did not work.";
	return h("div", { class: "sign-in-problem" }, h("h2", null, lead), errorBox(error));
}
