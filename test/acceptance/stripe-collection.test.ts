/**
 * Black-box checks of §32 (collection through Stripe), from the contract's text alone: Stripe's webhook at
 * POST /v1/integrations/stripe/webhook verified with Stripe's signature scheme, each event applied once, payments
 * recorded with kind and provider, failures counted into dunning, setup sessions saving the payment method, other
 * environments' objects ignored. Events are signed here as Stripe signs them, with the test environment's secret
 * (binding STRIPE_TEST_WEBHOOK_SECRET); without it the file is skipped. The parts that need Stripe's API (an account
 * with payment_provider "stripe") run only when STRIPE_API_BASE points at a stripe-mock.
 */
import { env, exports } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { openInvoice } from "../credit-notes/fixtures";
import { createAccount, createKey, get, patch, post } from "../helpers";
import { currentPeriod, customer, generateOne, outboxEvents } from "../invoicing/fixtures";
import { dbFingerprint } from "../support/db-state";

const settings = env as unknown as Record<string, string | undefined>;
const SECRET = settings.STRIPE_TEST_WEBHOOK_SECRET || "";
const HAS_STRIPE_API = Boolean(settings.STRIPE_API_BASE && settings.STRIPE_TEST_SECRET_KEY);
if (!SECRET)
	console.warn("stripe-collection: STRIPE_TEST_WEBHOOK_SECRET is unset — §32 webhook tests skipped");
if (SECRET && !HAS_STRIPE_API) {
	console.warn(
		"stripe-collection: STRIPE_API_BASE or STRIPE_TEST_SECRET_KEY unset — stripe-mock tests skipped",
	);
}

const hex = (bytes: ArrayBuffer) =>
	[...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");

async function hmac(secret: string, text: string): Promise<string> {
	const key = await crypto.subtle.importKey(
		"raw",
		new TextEncoder().encode(secret),
		{ name: "HMAC", hash: "SHA-256" },
		false,
		["sign"],
	);
	return hex(await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(text)));
}

/** `Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "{t}.{raw body}">`, keyed with the secret's UTF-8 bytes. */
async function signature(raw: string, options: { secret?: string; t?: number; extra?: string[] } = {}) {
	const t = options.t ?? Math.floor(Date.now() / 1000);
	const v1 = await hmac(options.secret ?? SECRET, `${t}.${raw}`);
	return [`t=${t}`, ...(options.extra ?? []), `v1=${v1}`].join(",");
}

async function deliver(event: Record<string, unknown>, header?: string | null) {
	const raw = JSON.stringify(event);
	const headers: Record<string, string> = { "Content-Type": "application/json" };
	const signed = header === undefined ? await signature(raw) : header;
	if (signed !== null) headers["Stripe-Signature"] = signed;
	const response = await exports.default.fetch(
		new Request("https://billing.test/v1/integrations/stripe/webhook", {
			method: "POST",
			headers,
			body: raw,
		}),
	);
	const text = await response.text();
	let body: any = text;
	try {
		body = text ? JSON.parse(text) : null;
	} catch {}
	return { status: response.status, body, raw };
}

const eventId = () => `evt_${crypto.randomUUID().replaceAll("-", "")}`;
const piId = () => `pi_${crypto.randomUUID().replaceAll("-", "").slice(0, 24)}`;

function event(type: string, object: Record<string, unknown>) {
	return {
		id: eventId(),
		object: "event",
		type,
		api_version: "2024-06-20",
		created: Math.floor(Date.now() / 1000),
		livemode: false,
		data: { object },
	};
}

const succeeded = (invoiceId: string, amountMinor: number, id = piId()) =>
	event("payment_intent.succeeded", {
		id,
		object: "payment_intent",
		amount: amountMinor,
		amount_received: amountMinor,
		currency: "usd",
		status: "succeeded",
		metadata: { invoice_id: invoiceId },
	});

/** A Checkout Session of mode payment, paid: Stripe sends it besides payment_intent.succeeded. */
const checkoutPaid = (invoiceId: string, pi: string, amountMinor: number) =>
	event("checkout.session.completed", {
		id: `cs_test_${crypto.randomUUID().slice(0, 8)}`,
		object: "checkout.session",
		mode: "payment",
		payment_status: "paid",
		amount_total: amountMinor,
		currency: "usd",
		payment_intent: pi,
		metadata: { invoice_id: invoiceId },
	});

let testKey: string;
beforeAll(async () => {
	if (SECRET) testKey = await createKey("admin", "test");
});

const invoiceOf = async (id: string) => (await get(`/v1/invoices/${id}`, { key: testKey })).body;
/**
 * The stored state, with the outbox (webhook_events) by its event ids only: earlier writes' events are delivered
 * after their answers, which updates their delivery columns while a test runs; a new event would add an id.
 */
const stableState = async () => {
	const { results } = await env.DB.prepare("SELECT id FROM webhook_events ORDER BY id").all<{ id: string }>();
	return {
		...(await dbFingerprint(["webhook_events"])),
		webhook_event_ids: results.map((row) => row.id).join(),
	};
};
const tables = async (...names: string[]) => {
	const all: Record<string, string> = await stableState();
	return Object.fromEntries(
		names.map((name) => [
			name === "webhook_events" ? "webhook_event_ids" : name,
			all[name === "webhook_events" ? "webhook_event_ids" : name],
		]),
	);
};

describe.skipIf(!SECRET)("§32 Stripe webhook: signatures", () => {
	it.each([
		["missing", async () => null],
		["signed with another secret", async (raw: string) => signature(raw, { secret: "whsec_not_the_secret" })],
		["older than 300 s", async (raw: string) => signature(raw, { t: Math.floor(Date.now() / 1000) - 301 })],
		["malformed", async () => "v1=deadbeef"],
	])("a %s signature → 400, nothing changes", async (_label, sign) => {
		const invoice = await openInvoice(10, testKey);
		const body = succeeded(invoice.id, 1000);
		const before = await stableState();
		const response = await deliver(body, await sign(JSON.stringify(body)));
		expect(response.status, JSON.stringify(response.body)).toBe(400);
		expect(await stableState()).toEqual(before);
		expect((await invoiceOf(invoice.id)).status).toBe("open");
	});

	it("any one v1 entry may match (others ignored) → 200, applied", async () => {
		const invoice = await openInvoice(10, testKey);
		const body = succeeded(invoice.id, 1000);
		const header = await signature(JSON.stringify(body), { extra: [`v1=${"0".repeat(64)}`] });
		expect((await deliver(body, header)).status).toBe(200);
		expect((await invoiceOf(invoice.id)).status).toBe("paid");
	});

	it("needs no API key (Stripe sends none)", async () => {
		const response = await deliver(event("customer.created", { id: "cus_1", object: "customer" }));
		expect(response.status).toBe(200);
	});
});

describe.skipIf(!SECRET)("§32 Stripe webhook: payments", () => {
	it("payment_intent.succeeded → a stripe payment of kind payment, invoice paid, invoice.paid + payment.successful", async () => {
		const invoice = await openInvoice(123.45, testKey);
		const body = succeeded(invoice.id, 12345);
		const pi = (body.data.object as { id: string }).id;
		const response = await deliver(body);
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		const paid = await invoiceOf(invoice.id);
		expect(paid.status).toBe("paid");
		expect(paid.collection?.status).toBe("succeeded");
		expect(paid.payments).toEqual([
			expect.objectContaining({ kind: "payment", provider: "stripe", amount: 123.45, reference: pi }),
		]);
		const listed = (await get(`/v1/payments?invoice_id=${invoice.id}`, { key: testKey })).body.payments;
		expect(listed).toEqual([
			expect.objectContaining({ kind: "payment", provider: "stripe", amount: 123.45, reference: pi }),
		]);
		expect(await outboxEvents("invoice.paid", invoice.id)).toHaveLength(1);
		expect(await outboxEvents("payment.successful", invoice.id)).toHaveLength(1);
	});

	it("a redelivered event answers 200 and changes nothing", async () => {
		const invoice = await openInvoice(20, testKey);
		const body = succeeded(invoice.id, 2000);
		expect((await deliver(body)).status).toBe(200);
		const before = await dbFingerprint();
		expect((await deliver(body)).status).toBe(200);
		expect(await dbFingerprint()).toEqual(before);
		expect((await invoiceOf(invoice.id)).payments).toHaveLength(1);
	});

	it("checkout.session.completed for a PaymentIntent already recorded changes nothing (Stripe sends both)", async () => {
		const invoice = await openInvoice(30, testKey);
		const body = succeeded(invoice.id, 3000);
		const pi = (body.data.object as { id: string }).id;
		expect((await deliver(body)).status).toBe(200);
		const before = await tables("invoices", "payments", "webhook_events");
		const session = checkoutPaid(invoice.id, pi, 3000);
		expect((await deliver(session)).status).toBe(200);
		expect(await tables("invoices", "payments", "webhook_events")).toEqual(before);
	});

	it("checkout.session.completed (mode payment, paid) alone records the payment from amount_total", async () => {
		const invoice = await openInvoice(45, testKey);
		const pi = piId();
		const session = checkoutPaid(invoice.id, pi, 4500);
		expect((await deliver(session)).status).toBe(200);
		const paid = await invoiceOf(invoice.id);
		expect(paid.status).toBe("paid");
		expect(paid.payments).toEqual([
			expect.objectContaining({ kind: "payment", provider: "stripe", amount: 45, reference: pi }),
		]);
	});

	it("an already paid invoice records nothing (200) and an audit record names the unapplied PaymentIntent", async () => {
		const invoice = await openInvoice(15, testKey);
		expect((await post(`/v1/invoices/${invoice.id}/pay`, {}, { key: testKey })).status).toBe(200);
		const body = succeeded(invoice.id, 1500);
		const pi = (body.data.object as { id: string }).id;
		expect((await deliver(body)).status).toBe(200);
		expect((await invoiceOf(invoice.id)).payments).toEqual([expect.objectContaining({ provider: "manual" })]);
		// Newest first, in the test environment: the record may be filed under the invoice or the event.
		const audit = await get("/v1/audit-log?limit=100", { key: testKey });
		expect(JSON.stringify(audit.body.records)).toContain(pi);
	});

	it("an event naming another environment's invoice is ignored (200)", async () => {
		const live = await openInvoice(10);
		const before = await tables("invoices", "payments", "webhook_events");
		expect((await deliver(succeeded(live.id, 1000))).status).toBe(200);
		expect(await tables("invoices", "payments", "webhook_events")).toEqual(before);
		expect((await get(`/v1/invoices/${live.id}`)).body.status).toBe("open");
	});

	it("an unknown event type, or one naming no known invoice, answers 200 and changes nothing", async () => {
		const before = await tables("invoices", "payments", "accounts", "webhook_events");
		expect((await deliver(event("charge.dispute.created", { id: "dp_1", object: "dispute" }))).status).toBe(
			200,
		);
		expect((await deliver(succeeded("inv_01jd0000000000000000000000", 100))).status).toBe(200);
		expect(await tables("invoices", "payments", "accounts", "webhook_events")).toEqual(before);
	});
});

describe.skipIf(!SECRET)("§32 Stripe webhook: setup sessions", () => {
	const setup = (accountId: string, paymentMethod: string) =>
		event("checkout.session.completed", {
			id: `cs_test_${crypto.randomUUID().slice(0, 8)}`,
			object: "checkout.session",
			mode: "setup",
			payment_method: paymentMethod,
			metadata: { account_id: accountId },
		});

	it("mode setup with a payment method saves it on the account", async () => {
		const account = await createAccount(testKey);
		expect((await deliver(setup(account.id, "pm_card_visa_saved"))).status).toBe(200);
		const after = await get(`/v1/accounts/${account.id}`, { key: testKey });
		expect(after.body.stripe_payment_method_id).toBe("pm_card_visa_saved");
	});

	it("a setup session naming another environment's account is ignored", async () => {
		const live = await createAccount();
		expect((await deliver(setup(live.id, "pm_other_env"))).status).toBe(200);
		expect((await get(`/v1/accounts/${live.id}`)).body.stripe_payment_method_id).toBeNull();
	});
});

describe.skipIf(!SECRET || !HAS_STRIPE_API)("§32 dunning through a PaymentIntent (stripe-mock)", () => {
	async function stripeInvoice() {
		const { account } = await customer({ base_fee: 80, charges: [] }, { key: testKey });
		const configured = await patch(
			`/v1/accounts/${account.id}`,
			{ payment_provider: "stripe", stripe_payment_method_id: "pm_card_visa" },
			{ key: testKey },
		);
		expect(configured.status, JSON.stringify(configured.body)).toBe(200);
		expect(configured.body.stripe_customer_id).toMatch(/^cus_/);
		const invoice = await generateOne(currentPeriod(), account.id, testKey);
		let view = await invoiceOf(invoice.id);
		for (let i = 0; i < 40 && !view.collection?.payment_intent_id; i++) {
			await new Promise((resolve) => setTimeout(resolve, 250));
			view = await invoiceOf(invoice.id);
		}
		expect(view.collection).toMatchObject({ provider: "stripe", status: "pending", attempts: 0 });
		expect(view.collection.payment_intent_id).toMatch(/^pi_/);
		return view;
	}

	const failed = (invoiceId: string, pi: string, message: string) =>
		event("payment_intent.payment_failed", {
			id: pi,
			object: "payment_intent",
			amount: 8000,
			currency: "usd",
			status: "requires_payment_method",
			last_payment_error: { message },
			metadata: { invoice_id: invoiceId },
		});

	it("each failure counts an attempt and schedules the next retry day; the last one fails the collection", async () => {
		const invoice = await stripeInvoice();
		const pi = invoice.collection.payment_intent_id;
		expect((await deliver(failed(invoice.id, pi, "Your card was declined."))).status).toBe(200);
		let view = await invoiceOf(invoice.id);
		expect(view.collection).toMatchObject({
			status: "pending",
			attempts: 1,
			last_error: "Your card was declined.",
		});
		const dayLater = Date.now() + 86_400_000;
		expect(Math.abs(Date.parse(view.collection.next_attempt_at) - dayLater)).toBeLessThan(5 * 60_000);
		const [firstFailure] = await outboxEvents("payment.failed", invoice.id);
		expect(firstFailure?.data).toMatchObject({
			invoice_id: invoice.id,
			attempt: 1,
			error: "Your card was declined.",
		});

		for (let attempt = 2; attempt <= 4; attempt++) {
			expect((await deliver(failed(invoice.id, pi, `Declined ${attempt}`))).status).toBe(200);
		}
		view = await invoiceOf(invoice.id);
		expect(view.status).toBe("open");
		expect(view.collection).toMatchObject({ status: "failed", attempts: 4, next_attempt_at: null });
		expect(await outboxEvents("payment.failed", invoice.id)).toHaveLength(4);
		const [lastFailure] = await outboxEvents("invoice.payment_failed", invoice.id);
		expect(lastFailure?.data).toMatchObject({ invoice_id: invoice.id, attempts: 4 });
	});
});
