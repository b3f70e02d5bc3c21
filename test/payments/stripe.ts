/**
 * What the Stripe tests share: whether stripe-mock runs (test/payments/stripe-mock-server.ts starts it behind a
 * recorder), what the service sent it, faults to inject, and Stripe events signed as Stripe signs them.
 */
import { env, exports } from "cloudflare:workers";
import { describe, expect } from "vitest";

export const STRIPE = env.STRIPE_API_BASE as string;
export const TEST_WEBHOOK_SECRET = env.STRIPE_TEST_WEBHOOK_SECRET as string;
export const LIVE_WEBHOOK_SECRET = env.STRIPE_WEBHOOK_SECRET as string;
export const TEST_SECRET_KEY = env.STRIPE_TEST_SECRET_KEY as string;

async function stripeMockRuns(): Promise<boolean> {
	try {
		const response = await fetch(`${STRIPE}/__status`);
		return ((await response.json()) as { stripe_mock: boolean }).stripe_mock;
	} catch {
		return false;
	}
}

const available = await stripeMockRuns();
if (!available) {
	console.warn(
		"SKIPPED: the Stripe tests need stripe-mock (set STRIPE_MOCK_BIN, or put it at ../shared/tools/stripe-mock; " +
			"`go install github.com/stripe/stripe-mock@v0.186.0` gets it). CI fails instead of skipping.",
	);
}

/** `describe`, or a skip that says why when stripe-mock is missing (outside CI: under CI the setup fails). */
export const describeWithStripe = available ? describe : describe.skip;

export interface RecordedRequest {
	method: string;
	path: string;
	headers: Record<string, string>;
	body: string;
	status: number;
}

/** The requests the service sent Stripe whose method, path or body contain `match`. */
export async function sentToStripe(match: string): Promise<(RecordedRequest & { form: URLSearchParams })[]> {
	const response = await fetch(`${STRIPE}/__recorded`);
	const all = (await response.json()) as RecordedRequest[];
	return all
		.filter((r) =>
			`${r.method} ${r.path} ${decodeURIComponent(r.body)} ${r.headers["idempotency-key"] ?? ""}`.includes(
				match,
			),
		)
		.map((r) => ({ ...r, form: new URLSearchParams(r.body) }));
}

/** Makes the next `times` requests containing `match` answer `answer` (a status) or never answer ("hang"). */
export async function injectFault(match: string, answer: number | "hang", times = 1, body?: unknown) {
	await fetch(`${STRIPE}/__faults`, {
		method: "POST",
		body: JSON.stringify({ match, answer, times, body }),
	});
}

export async function clearFaults(match: string) {
	await fetch(`${STRIPE}/__faults`, { method: "DELETE", body: match });
}

function hex(bytes: ArrayBuffer): string {
	return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

export async function stripeSignature(
	body: string,
	secret: string,
	timestamp = Math.floor(Date.now() / 1000),
) {
	const key = await crypto.subtle.importKey(
		"raw",
		new TextEncoder().encode(secret),
		{ name: "HMAC", hash: "SHA-256" },
		false,
		["sign"],
	);
	const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${timestamp}.${body}`));
	return `t=${timestamp},v1=${hex(mac)}`;
}

let sequence = 0;
/** A Stripe event of `type` about `object`, with a fresh id. */
export function stripeEvent(type: string, object: Record<string, unknown>, id?: string) {
	sequence += 1;
	return {
		id: id ?? `evt_test_${Date.now()}_${sequence}_${Math.random().toString(36).slice(2, 8)}`,
		object: "event",
		type,
		created: Math.floor(Date.now() / 1000),
		livemode: false,
		data: { object },
	};
}

/** Posts an event to the service's Stripe endpoint, signed with `secret` (the test environment's by default). */
export async function deliverStripeEvent(
	event: unknown,
	options: { secret?: string; signature?: string; timestamp?: number } = {},
) {
	const body = JSON.stringify(event);
	const signature =
		options.signature ??
		(await stripeSignature(body, options.secret ?? TEST_WEBHOOK_SECRET, options.timestamp));
	const response = await exports.default.fetch(
		new Request("https://billing.test/v1/integrations/stripe/webhook", {
			method: "POST",
			headers: { "Content-Type": "application/json", "Stripe-Signature": signature },
			body,
		}),
	);
	const text = await response.text();
	return { status: response.status, body: text ? JSON.parse(text) : null };
}

/** Waits until `check` passes (work done after the answer, in waitUntil), for up to ~8 s. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 8_000): Promise<T> {
	const started = Date.now();
	for (;;) {
		try {
			return await check();
		} catch (error) {
			if (Date.now() - started > timeoutMs) throw error;
			await new Promise((done) => setTimeout(done, 100));
		}
	}
}

export { expect };
