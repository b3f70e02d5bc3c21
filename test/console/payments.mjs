// Getting paid through Stripe in the console and the portal (docs/payments.md), in headless Chromium against
// `wrangler dev` and Stripe's official mock: an account's payment settings changed through PATCH, Stripe's 409 and
// 502 refusals said clearly, an invoice's collection state (status, attempts, next attempt, last error, payment
// link), and the portal's "Pay" link. Ports of its own: the Worker on 8870, stripe-mock on 8871, a proxy that makes
// Stripe refuse some customers on 8872. Run with `npm run test:console:payments` (after `npm run build:console`).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { after, before, describe, it } from "node:test";
import { startWorker } from "../bench/worker.mjs";
import { apiClient, openConsoleRoute, signInToConsole, startBrowser } from "./harness.mjs";

const PORTS = { worker: 8870, stripeMock: 8871, proxy: 8872 };
const WEBHOOK_SECRET = "whsec_console_payments_test";
const STEP_MS = 60_000;
const hardStop = setTimeout(() => {
	console.error("payments browser tests: over 4 minutes, giving up");
	process.exit(1);
}, 240_000);
hardStop.unref();

const STRIPE_MOCK =
	process.env.STRIPE_MOCK_BIN ??
	[
		new URL("../../../shared/tools/stripe-mock", import.meta.url).pathname,
		"/work/shared/tools/stripe-mock",
	].find(existsSync);
if (!STRIPE_MOCK || !existsSync(STRIPE_MOCK)) {
	console.error(
		"payments browser tests need stripe-mock: set STRIPE_MOCK_BIN (docs/payments.md#testing-against-stripe-mock)",
	);
	process.exit(1);
}
const AXE = readFileSync(new URL("../../node_modules/axe-core/axe.min.js", import.meta.url), "utf8");
const period = new Date().toISOString().slice(0, 7);

let stripeMock;
let proxy;
let worker;
let browser;
let page;
let api;
let testApi;
const data = {};

/** Forwards to stripe-mock, but refuses to create a customer named "Refused…", as Stripe refuses a bad request. */
function startProxy() {
	const server = createServer((request, response) => {
		const chunks = [];
		request.on("data", (chunk) => chunks.push(chunk));
		request.on("end", async () => {
			const body = Buffer.concat(chunks);
			if (request.url === "/v1/customers" && body.toString().includes("name=Refused")) {
				response.writeHead(400, { "Content-Type": "application/json" });
				response.end(
					JSON.stringify({ error: { type: "invalid_request_error", message: "Invalid email address." } }),
				);
				return;
			}
			const upstream = await fetch(`http://127.0.0.1:${PORTS.stripeMock}${request.url}`, {
				method: request.method,
				headers: Object.fromEntries(
					Object.entries(request.headers).filter(([name]) => !["host", "content-length"].includes(name)),
				),
				body: request.method === "GET" ? undefined : body,
			});
			response.writeHead(upstream.status, { "Content-Type": "application/json" });
			response.end(await upstream.text());
		});
	});
	return new Promise((resolve) => server.listen(PORTS.proxy, "127.0.0.1", () => resolve(server)));
}

async function until(what, check, timeoutMs = 15_000) {
	const deadline = Date.now() + timeoutMs;
	for (;;) {
		const value = await check();
		if (value) return value;
		if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
		await new Promise((r) => setTimeout(r, 250));
	}
}

/** A customer on a flat plan with one invoice of the current period; `fields` set on the account first. */
async function invoiced(client, name, fields = {}) {
	const account = await client("POST", "/accounts", { name, email: "ap@pay.example", ...fields });
	const plan = await client("POST", "/pricing/rate-plans", {
		name: `${name} plan`,
		base_fee: 40,
		charges: [],
	});
	await client("POST", "/subscriptions", {
		account_id: account.id,
		rate_plan_id: plan.id,
		agent_instance_ids: [`${name.toLowerCase().replaceAll(" ", "-")}-1`],
	});
	const { invoices } = await client("POST", "/invoices/generate", {
		billing_period: period,
		account_id: account.id,
	});
	return { account, invoice: invoices[0] };
}

/** A Stripe event delivered to the Worker, signed as Stripe signs them. */
async function deliverStripeEvent(type, object) {
	const body = JSON.stringify({ id: `evt_console_${Date.now()}`, object: "event", type, data: { object } });
	const t = Math.floor(Date.now() / 1000);
	const v1 = createHmac("sha256", WEBHOOK_SECRET).update(`${t}.${body}`).digest("hex");
	const response = await fetch(`${worker.base}/v1/integrations/stripe/webhook`, {
		method: "POST",
		headers: { "Content-Type": "application/json", "Stripe-Signature": `t=${t},v1=${v1}` },
		body,
	});
	assert.equal(response.status, 200, await response.text());
}

before(async () => {
	const started = Date.now();
	stripeMock = spawn(STRIPE_MOCK, ["-http-addr", `127.0.0.1:${PORTS.stripeMock}`], { stdio: "ignore" });
	proxy = await startProxy();
	// Only the live environment collects through Stripe: the test environment has no key (→ 409).
	worker = await startWorker({
		port: PORTS.worker,
		vars: {
			STRIPE_SECRET_KEY: "sk_test_4eC39HqLyjWDarjtT1zdp7dc",
			STRIPE_WEBHOOK_SECRET: WEBHOOK_SECRET,
			STRIPE_API_BASE: `http://127.0.0.1:${PORTS.proxy}`,
		},
	});
	api = apiClient(worker.base, worker.adminKey);
	await until("stripe-mock", () =>
		fetch(`http://127.0.0.1:${PORTS.stripeMock}/v1/customers`, {
			headers: { Authorization: "Bearer sk_test_x" },
		}).then(
			() => true,
			() => false,
		),
	);
	data.card = await api("POST", "/accounts", { name: "Card Co", email: "ap@card.example" });
	const cardPlan = await api("POST", "/pricing/rate-plans", { name: "Card plan", base_fee: 40, charges: [] });
	await api("POST", "/subscriptions", {
		account_id: data.card.id,
		rate_plan_id: cardPlan.id,
		agent_instance_ids: ["card-co-1"],
	});
	data.refused = await api("POST", "/accounts", { name: "Refused Co", email: "ap@refused.example" });
	data.checkout = await invoiced(api, "Checkout Co", { payment_provider: "stripe" });
	data.checkout.invoice = await until("the Checkout Session", async () => {
		const invoice = await api("GET", `/invoices/${data.checkout.invoice.id}`);
		return invoice.collection.payment_url ? invoice : null;
	});
	const testKey = await api("POST", "/api-keys", { type: "api", environment: "test", permission: "admin" });
	data.testKey = testKey.key;
	testApi = apiClient(worker.base, testKey.key);
	data.testAccount = await testApi("POST", "/accounts", { name: "Test Env Co", email: "ap@test.example" });
	browser = await startBrowser();
	page = browser.page;
	await signInToConsole(page, worker.base, worker.adminKey);
	console.log(`ready in ${Date.now() - started} ms`);
});

after(async () => {
	await browser?.stop();
	await worker?.stop();
	proxy?.close();
	stripeMock?.kill();
	clearTimeout(hardStop);
});

function step(name, fn) {
	it(name, { timeout: STEP_MS }, async () => {
		try {
			await fn();
		} catch (error) {
			await browser?.screenshot(`FAILED-payments-${name.replace(/[^a-z0-9]+/gi, "-").slice(0, 50)}`);
			throw error;
		}
	});
}

const text = (selector) => page.locator(selector).first().textContent();

/** Saves the payment settings form of the customer's page as given, and waits for what it answers. */
async function savePaymentSettings({ provider, method, block }) {
	const form = page.locator("form[aria-label='Payment settings']");
	await form.locator("select[name=payment_provider]").selectOption(provider);
	if (method !== undefined) await form.locator("input[name=stripe_payment_method_id]").fill(method);
	if (block !== undefined) await form.locator("input[name=block_on_failed_payment]").setChecked(block);
	await form.locator("button[type=submit]").click();
}

describe("payments in the console and the portal", { timeout: 230_000 }, () => {
	step(
		"an account's payment settings: shown, changed to Stripe through PATCH, linked to Stripe",
		async () => {
			await openConsoleRoute(page, worker.base, `#/customers/${data.card.id}`);
			assert.match(await text(".payment-facts [data-payment-provider]"), /manual/);
			await savePaymentSettings({ provider: "stripe", method: "pm_card_visa", block: true });
			await page.waitForSelector(".payment-facts [data-payment-provider=stripe]");
			const stored = await api("GET", `/accounts/${data.card.id}`);
			assert.equal(stored.payment_provider, "stripe");
			assert.equal(stored.stripe_payment_method_id, "pm_card_visa");
			assert.equal(stored.block_on_failed_payment, true);
			assert.match(stored.stripe_customer_id, /^cus_/);
			assert.match(await text(".stripe-customer"), new RegExp(stored.stripe_customer_id));
			assert.equal(
				await page.locator(".stripe-customer a").getAttribute("href"),
				`https://dashboard.stripe.com/customers/${stored.stripe_customer_id}`,
			);
			assert.match(await text(".payment-method"), /pm_card_visa/);
			assert.match(await text(".payment-facts .blocks"), /^yes/);
		},
	);

	step("Stripe refusing the customer: 502 in the API's words, what to do, nothing changed", async () => {
		await openConsoleRoute(page, worker.base, `#/customers/${data.refused.id}`);
		await savePaymentSettings({ provider: "stripe" });
		await page.waitForSelector(".payment-settings-result .error");
		assert.match(await text(".payment-settings-result .error-meta"), /HTTP 502 · payment_provider_error/);
		assert.match(await text(".payment-settings-result .error-message"), /Invalid email address/);
		assert.match(await text(".payment-settings-result .refusal-hint"), /Nothing was changed/);
		assert.equal((await api("GET", `/accounts/${data.refused.id}`)).payment_provider, "manual");
	});

	step("an environment without a Stripe key: 409 said with the secret to set, nothing changed", async () => {
		const other = await browser.context.newPage();
		try {
			await signInToConsole(other, worker.base, data.testKey);
			await openConsoleRoute(other, worker.base, `#/customers/${data.testAccount.id}`);
			const form = other.locator("form[aria-label='Payment settings']");
			await form.locator("select[name=payment_provider]").selectOption("stripe");
			await form.locator("button[type=submit]").click();
			await other.waitForSelector(".payment-settings-result .error");
			assert.match(
				await other.locator(".payment-settings-result .error-meta").textContent(),
				/HTTP 409 · conflict/,
			);
			assert.match(
				await other.locator(".payment-settings-result .refusal-hint").textContent(),
				/STRIPE_TEST_SECRET_KEY/,
			);
		} finally {
			await other.close();
		}
		assert.equal((await testApi("GET", `/accounts/${data.testAccount.id}`)).payment_provider, "manual");
	});

	step("an invoice's collection: a declined card's attempts, next attempt and last error", async () => {
		// Card Co pays through Stripe with a saved card now (the first step): its invoice is charged to it.
		const { invoices } = await api("POST", "/invoices/generate", {
			billing_period: period,
			account_id: data.card.id,
		});
		const card = invoices[0];
		const asked = await until("the PaymentIntent", async () => {
			const invoice = await api("GET", `/invoices/${card.id}`);
			return invoice.collection.payment_intent_id ? invoice : null;
		});
		await deliverStripeEvent("payment_intent.payment_failed", {
			id: asked.collection.payment_intent_id,
			object: "payment_intent",
			amount: 4000,
			currency: "usd",
			metadata: { invoice_id: card.id },
			last_payment_error: { message: "Your card was declined." },
		});
		const failed = await api("GET", `/invoices/${card.id}`);
		assert.equal(failed.collection.attempts, 1);
		await openConsoleRoute(page, worker.base, `#/invoices/${card.id}`);
		assert.equal(await page.locator("dl.collection").getAttribute("data-collection-status"), "pending");
		assert.match(await text(".collection-attempts"), /^1$/);
		assert.match(await text(".collection-next"), new RegExp(failed.collection.next_attempt_at.slice(0, 10)));
		assert.match(await text(".collection-error"), /Your card was declined\./);
		assert.match(await text(".collection-intent"), new RegExp(asked.collection.payment_intent_id));
	});

	step("a Checkout invoice: its payment link in the console and the portal's Pay", async () => {
		const { invoice, account } = data.checkout;
		const url = invoice.collection.payment_url;
		await openConsoleRoute(page, worker.base, `#/invoices/${invoice.id}`);
		assert.equal(await page.locator(".collection-link a").getAttribute("href"), url);
		assert.match(await text(".collection-session"), /^cs_/);

		const session = await api("POST", `/accounts/${account.id}/portal-sessions`, {});
		await page.goto("about:blank");
		await page.goto(session.url);
		await page.waitForSelector("main#main h1");
		const pay = page.locator(`a.pay[aria-label='Pay invoice ${invoice.number} online']`);
		assert.equal(await pay.getAttribute("href"), url);
		assert.equal(await pay.textContent(), "Pay");
		if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(AXE);
		const serious = await page.evaluate(async () =>
			(await window.axe.run(document)).violations
				.filter((v) => v.impact === "serious" || v.impact === "critical")
				.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`),
		);
		assert.deepEqual(serious, []);
		// The refusal step's 502 is logged by Chromium as a failed load; anything else is a problem.
		assert.deepEqual(
			browser.problems.filter((problem) => !/status of 502/.test(problem)),
			[],
		);
	});
});
