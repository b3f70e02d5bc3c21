import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, expect } from "vitest";
import { storedPayloadProblems } from "./support/webhook-payloads";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

// Every webhook event this file's tests produced must match the payload schema the OpenAPI document publishes for
// its kind (test/support/webhook-payloads.ts).
afterAll(async () => {
	expect(await storedPayloadProblems(), "webhook deliveries that break their published schema").toEqual([]);
});
