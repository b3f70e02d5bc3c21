import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { type ApiResponse, createAccount, get } from "../helpers";
import { currentPeriod, customer, generateOne } from "../invoicing/fixtures";
import { mint, portalGet } from "./fixtures";

// The OpenAPI document's promises about the portal API, checked against its real answers: each status is
// declared, each required header is sent, and each sent header of the middlewares is declared.
let doc: any;

function declared(path: string, status: number) {
	const bare = `/portal/api${path.split("?")[0]}`;
	for (const [template, item] of Object.entries(doc.paths as Record<string, any>)) {
		if (new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`).test(bare) && item.get) {
			expect(item.get.security, template).toEqual([{ portalToken: [] }]);
			return item.get.responses[String(status)];
		}
	}
	throw new Error(`${bare} is not in the document`);
}

function expectDocumented(path: string, response: ApiResponse) {
	const where = `GET /portal/api${path} → ${response.status}`;
	const response_ = declared(path, response.status);
	expect(response_, `${where} is not documented`).toBeDefined();
	const headers = Object.fromEntries(
		Object.entries(response_.headers ?? {}).map(([name, h]: [string, any]) => [
			name.toLowerCase(),
			h.$ref ? doc.components.headers[h.$ref.split("/").pop()] : h,
		]),
	);
	for (const [name, header] of Object.entries(headers)) {
		if ((header as { required?: boolean }).required)
			expect(response.headers.get(name), `${where}: ${name}`).not.toBeNull();
	}
	for (const name of [
		"x-ratelimit-limit",
		"x-ratelimit-remaining",
		"x-ratelimit-reset",
		"retry-after",
		"www-authenticate",
	]) {
		if (response.headers.has(name)) expect(headers, `${where} sends ${name}`).toHaveProperty(name);
	}
}

beforeAll(async () => {
	doc = (await get("/v1/openapi.json", { key: null })).body;
});

describe("the OpenAPI document tells the truth about the portal API", () => {
	it("declares the portalToken scheme and every answer the portal gives", async () => {
		expect(doc.components.securitySchemes.portalToken).toMatchObject({ type: "http", scheme: "bearer" });
		const { account } = await customer({ base_fee: 9, charges: [] });
		const invoice = await generateOne(currentPeriod(), account.id);
		const session = await mint(account.id);
		for (const path of [
			"/overview",
			"/invoices",
			`/invoices/${invoice.id}`,
			`/invoices/${invoice.id}/pdf`,
			"/payments",
		]) {
			const response = await portalGet(path, session.token);
			expect(response.status, path).toBe(200);
			expectDocumented(path, response);
			expectDocumented(path, await portalGet(path, null));
		}
		expectDocumented("/invoices/inv_missing", await portalGet("/invoices/inv_missing", session.token));
		expectDocumented("/invoices?limit=0", await portalGet("/invoices?limit=0", session.token));
		const other = await mint((await createAccount()).id);
		await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(other.id)).lease(1000, 1000, null);
		const limited = await portalGet("/overview", other.token);
		expect(limited.status).toBe(429);
		expectDocumented("/overview", limited);
	});
});
