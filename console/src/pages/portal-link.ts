/**
 * "Share portal link" on a customer's page: mints a customer portal session (POST /v1/accounts/{id}/portal-sessions)
 * and shows its url once, with a copy button, and a way to revoke it at once. The url carries the token in its
 * fragment; see docs/portal.md.
 */
import type { PageContext } from "../context";
import { formValues, h } from "../dom";
import { dateTime } from "../format";
import type { PortalSessionView } from "../portal/types";
import { field, runInto, secretOnce, section } from "../ui";

const DURATIONS: [number, string][] = [
	[3_600, "1 hour"],
	[86_400, "24 hours"],
	[900, "15 minutes"],
];

export function portalLinkSection(ctx: PageContext, accountId: string): HTMLElement {
	const result = h("div", { "aria-live": "polite", "data-portal-link": accountId });
	const share = h("button", { type: "submit", class: "primary" }, "Share portal link");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Share portal link" },
		field(
			"Link works for",
			h(
				"select",
				{ name: "expires_in" },
				DURATIONS.map(([seconds, label]) => h("option", { value: seconds }, label)),
			),
		),
		share,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const expiresIn = Number(formValues(form).expires_in);
		void runInto(result, share, async () => {
			const session = await ctx.api.post<PortalSessionView>(`/accounts/${accountId}/portal-sessions`, {
				expires_in: expiresIn,
			});
			return shownOnce(ctx, session, result);
		});
	});
	return section(
		"Customer portal",
		h(
			"p",
			{ class: "muted" },
			"A read-only page of this customer's usage, credit and invoices, for whoever holds the link.",
		),
		form,
		result,
	);
}

function shownOnce(ctx: PageContext, session: PortalSessionView, slot: HTMLElement): HTMLElement {
	const clear = () => slot.replaceChildren();
	const revoke = h("button", { type: "button", class: "danger small" }, "Revoke this link now");
	const revoked = h("div", { "aria-live": "polite" });
	revoke.addEventListener("click", () =>
		runInto(revoked, revoke, async () => {
			await ctx.api.delete(`/portal-sessions/${session.id}`);
			revoke.remove();
			return h("p", { class: "ok" }, "Revoked: the link no longer opens the portal.");
		}),
	);
	return secretOnce(
		"Portal link",
		session.url ?? "",
		clear,
		h("p", { class: "muted" }, `Works until ${dateTime(session.expires_at)}. Session ${session.id}.`),
		h("div", { class: "actions" }, revoke),
		revoked,
	);
}
