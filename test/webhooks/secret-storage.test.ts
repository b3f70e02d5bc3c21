import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { database } from "../../src/db/client";
import { createWebhookEndpoint } from "../../src/webhooks/endpoints";
import {
	MissingSecretsKey,
	openWebhookSecret,
	resealWebhookSecrets,
	sealWebhookSecret,
} from "../../src/webhooks/secret-box";
import { newWebhookSecret } from "../../src/webhooks/signing";

// Webhook signing secrets are stored only encrypted (§14), with the key from WEBHOOK_SECRETS_KEY or, when unset,
// derived from ADMIN_API_KEY.

const dedicated = { WEBHOOK_SECRETS_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(7))) };
const operatorOnly = { ADMIN_API_KEY: "sk_api_test_operator_key_0123456789abcdef" };
const both = { ...dedicated, ...operatorOnly };

async function storedSecret(id: string): Promise<string> {
	const row = await env.DB.prepare("SELECT secret FROM webhook_endpoints WHERE id = ?").bind(id).first<{
		secret: string;
	}>();
	return row?.secret as string;
}

async function insertEndpoint(id: string, secret: string) {
	const now = new Date().toISOString();
	await env.DB.prepare(
		`INSERT INTO webhook_endpoints (id, environment, url, events, description, status, secret, created_at, updated_at)
		 VALUES (?, 'live', 'https://receiver.example.com/hooks', '["invoice.created"]', NULL, 'enabled', ?, ?, ?)`,
	)
		.bind(id, secret, now, now)
		.run();
}

describe("webhook signing secrets at rest", () => {
	for (const [name, keys, source] of [
		["WEBHOOK_SECRETS_KEY", dedicated, "k"],
		["a key derived from ADMIN_API_KEY", operatorOnly, "a"],
	] as const) {
		it(`seals with ${name}, fresh IV each time, and opens to the same secret`, async () => {
			const secret = newWebhookSecret();
			const one = await sealWebhookSecret(keys, "whk_1", secret);
			const two = await sealWebhookSecret(keys, "whk_1", secret);
			expect(one).toMatch(new RegExp(`^enc1:${source}:`));
			expect(one).not.toBe(two);
			expect(one).not.toContain(secret.slice(6));
			expect(await openWebhookSecret(keys, "whk_1", one)).toBe(secret);
		});
	}

	it("cannot be opened for another endpoint or with another key", async () => {
		const sealed = await sealWebhookSecret(dedicated, "whk_1", newWebhookSecret());
		await expect(openWebhookSecret(dedicated, "whk_2", sealed)).rejects.toThrow();
		const otherKey = { WEBHOOK_SECRETS_KEY: btoa(String.fromCharCode(...new Uint8Array(32).fill(8))) };
		await expect(openWebhookSecret(otherKey, "whk_1", sealed)).rejects.toThrow();
	});

	it("refuses to create an endpoint when no key exists, storing nothing", async () => {
		const db = database(env.DB);
		await expect(
			createWebhookEndpoint({
				db,
				env: {},
				scope: { environment: "live" },
				input: { url: "https://receiver.example.com/x", events: ["invoice.created"] },
				rules: { allowLocal: false },
			}),
		).rejects.toBeInstanceOf(MissingSecretsKey);
		const count = await env.DB.prepare(
			"SELECT count(*) AS n FROM webhook_endpoints WHERE url = 'https://receiver.example.com/x'",
		).first<{ n: number }>();
		expect(count?.n).toBe(0);
		await expect(sealWebhookSecret({ WEBHOOK_SECRETS_KEY: "c2hvcnQ=" }, "whk_1", "x")).rejects.toBeInstanceOf(
			MissingSecretsKey,
		);
	});

	it("reseals plain secrets of older rows, then operator-derived ones once WEBHOOK_SECRETS_KEY is set", async () => {
		const db = database(env.DB);
		const plain = newWebhookSecret();
		await insertEndpoint("whk_legacy_plain", plain);
		const derived = newWebhookSecret();
		await insertEndpoint(
			"whk_legacy_derived",
			await sealWebhookSecret(operatorOnly, "whk_legacy_derived", derived),
		);

		// older rows still sign deliveries before they are resealed
		expect(await openWebhookSecret(operatorOnly, "whk_legacy_plain", plain)).toBe(plain);
		expect(await resealWebhookSecrets(db, operatorOnly)).toBeGreaterThanOrEqual(1);
		expect(await storedSecret("whk_legacy_plain")).toMatch(/^enc1:a:/);
		expect(await storedSecret("whk_legacy_derived")).toMatch(/^enc1:a:/);

		expect(await resealWebhookSecrets(db, both)).toBeGreaterThanOrEqual(2);
		for (const [id, secret] of [
			["whk_legacy_plain", plain],
			["whk_legacy_derived", derived],
		] as const) {
			const stored = await storedSecret(id);
			expect(stored).toMatch(/^enc1:k:/);
			expect(await openWebhookSecret(dedicated, id, stored)).toBe(secret);
		}
		expect(await resealWebhookSecrets(db, both)).toBe(0);
		const all = await env.DB.prepare("SELECT secret FROM webhook_endpoints").all<{ secret: string }>();
		for (const row of all.results) expect(row.secret).toMatch(/^enc1:k:/);
	});
});
