import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { post } from "../helpers";
import { actions, currentPeriod, customer, type Invoice, sdkKey } from "../invoicing/fixtures";

// §14: a POST /v1/invoices/generate whose Worker died mid-way left its Idempotency-Key in progress and some
// invoices made. After 60 seconds the repeat runs afresh and invoices the rest, each subscription exactly once.

const plan = {
	charges: [
		{
			metric: "calls",
			source: { kind: "action", type: "call", aggregate: "count" },
			model: "per_unit",
			unit_price: 3,
		},
	],
};

async function sha256Hex(text: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
	return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

describe("an abandoned invoice generation", () => {
	it("is completed by the repeat after 60 seconds, exactly once per subscription", async () => {
		const created = await post("/v1/api-keys", { type: "api", permission: "admin", environment: "test" });
		const admin = created.body as { id: string; key: string };
		const customers = [];
		for (let i = 0; i < 5; i++) customers.push(await customer(plan, { key: admin.key }));
		const key = await sdkKey("test");
		for (const [i, c] of customers.entries()) {
			const response = await post(
				"/v1/actions/batch",
				{ events: actions(c.instances[0] as string, "call", i + 1) },
				{ key },
			);
			expect(response.status).toBe(201);
		}
		// The dead first request: it invoiced two subscriptions (by account), then its Worker died with the key
		// still claimed 61 seconds ago.
		for (const c of customers.slice(0, 2)) {
			const partial = await post(
				"/v1/invoices/generate",
				{ billing_period: currentPeriod(), account_id: c.account.id },
				{ key: admin.key },
			);
			expect(partial.status).toBe(201);
		}
		const body = { billing_period: currentPeriod() };
		await env.DB.prepare(
			`INSERT INTO idempotency_records (environment, key_id, method, path, key, request_hash, claim_id, state, created_at, expires_at)
			 VALUES ('test', ?, 'POST', '/v1/invoices/generate', 'gen-after-crash', ?, 'dead', 'in_progress', ?, ?)`,
		)
			.bind(
				admin.id,
				await sha256Hex(JSON.stringify(body)),
				new Date(Date.now() - 61_000).toISOString(),
				new Date(Date.now() + 3_600_000).toISOString(),
			)
			.run();

		const headers = { "Idempotency-Key": "gen-after-crash" };
		const repeat = await post("/v1/invoices/generate", body, { key: admin.key, headers });
		expect(repeat.status, JSON.stringify(repeat.body)).toBe(201);
		expect(repeat.headers.get("Idempotent-Replayed")).toBeNull();
		const rest = repeat.body.invoices as Invoice[];
		expect(rest.map((i) => i.subscription_id).sort()).toEqual(
			customers
				.slice(2)
				.map((c) => c.subscription.id)
				.sort(),
		);

		const again = await post("/v1/invoices/generate", body, { key: admin.key, headers });
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(repeat.body);

		const { results } = await env.DB.prepare(
			`SELECT subscription_id, count(*) AS n, sum(CAST(amount AS REAL)) AS amount FROM invoices
			 WHERE environment = 'test' AND subscription_id IN (SELECT value FROM json_each(?)) GROUP BY subscription_id`,
		)
			.bind(JSON.stringify(customers.map((c) => c.subscription.id)))
			.all<{ subscription_id: string; n: number; amount: number }>();
		expect(results).toHaveLength(5);
		for (const [i, c] of customers.entries()) {
			const row = results.find((r) => r.subscription_id === c.subscription.id);
			expect(row?.n).toBe(1);
			expect(row?.amount).toBe(3 * (i + 1));
		}
	});
});
