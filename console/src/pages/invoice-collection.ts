/**
 * "Collection" on an invoice's page (docs/payments.md#collection): how the invoice is being paid — by hand, or
 * through Stripe — and how far that went: status, failed attempts, the next retry, Stripe's last error, its
 * PaymentIntent or Checkout Session, and the payment link the customer pays on.
 */
import { h } from "../dom";
import type { Invoice } from "../types";
import { badge, section, when } from "../ui";

const STATUS_WORDS: Record<Invoice["collection"]["status"], string> = {
	none: "recorded by hand: nothing is asked of Stripe",
	pending: "Stripe is asked and has not confirmed",
	succeeded: "Stripe collected the payment",
	failed: "every retry was declined",
	canceled: "paid by hand or voided while Stripe was asked",
};

export function collectionSection(invoice: Invoice): HTMLElement | null {
	const collection = invoice.collection;
	if (collection === undefined) return null;
	const code = (value: string | null) => (value === null ? "—" : h("code", null, value));
	const fact = (label: string, cls: string, value: Node | string) => [
		h("dt", null, label),
		h("dd", { class: cls }, value),
	];
	if (collection.provider === "manual") {
		return section(
			"Collection",
			h("p", { class: "muted collection-manual" }, `By hand: ${STATUS_WORDS.none}.`),
		);
	}
	const url = collection.payment_url;
	return section(
		"Collection",
		h(
			"dl",
			{ class: "facts collection", "data-collection-status": collection.status },
			fact(
				"Status",
				"collection-status",
				h("span", null, badge(collection.status), ` ${STATUS_WORDS[collection.status]}`),
			),
			fact("Failed attempts", "collection-attempts", String(collection.attempts)),
			fact("Next attempt", "collection-next", when(collection.next_attempt_at)),
			fact("Last error", "collection-error", collection.last_error ?? "—"),
			fact("PaymentIntent", "collection-intent", code(collection.payment_intent_id)),
			fact("Checkout Session", "collection-session", code(collection.checkout_session_id)),
			fact(
				"Payment link",
				"collection-link",
				url === null
					? "—"
					: h("a", { href: url, rel: "noopener noreferrer", target: "_blank", class: "payment-link" }, url),
			),
		),
	);
}
