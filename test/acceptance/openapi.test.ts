/** The OpenAPI document describes coupons, discounts, price overrides, portal sessions, the portal API and the audit log. */
import { describe, expect, it } from "vitest";
import { get } from "../helpers";

describe("the OpenAPI document", () => {
	it("lists every new endpoint with its methods", async () => {
		const doc = (await get("/v1/openapi.json", { key: null })).body;
		const methods = (path: string) => Object.keys(doc.paths[path] ?? {}).sort();
		expect(methods("/v1/coupons")).toEqual(["get", "post"]);
		expect(methods("/v1/coupons/{coupon_id}")).toEqual(["delete", "get"]);
		expect(methods("/v1/subscriptions/{subscription_id}/discounts")).toEqual(["post"]);
		expect(methods("/v1/accounts/{account_id}/portal-sessions")).toEqual(["post"]);
		expect(methods("/v1/portal-sessions/{portal_session_id}")).toEqual(["delete"]);
		expect(methods("/v1/audit-log")).toEqual(["get"]);
		for (const path of [
			"/portal/api/overview",
			"/portal/api/invoices",
			"/portal/api/invoices/{invoice_id}",
			"/portal/api/invoices/{invoice_id}/pdf",
		]) {
			expect(methods(path), path).toEqual(["get"]);
		}
		const text = JSON.stringify(doc.components.schemas);
		expect(text).toContain("pending_price_overrides");
		expect(text).toContain("times_redeemed");
		expect(text).toContain("next_cursor");
		const simulate = JSON.stringify(doc.paths["/v1/pricing/simulate"].post.requestBody);
		const schemas = JSON.stringify(doc.components.schemas);
		expect(simulate.includes("subscription_id") || schemas.includes("subscription_id")).toBe(true);
		const auditParams = doc.paths["/v1/audit-log"].get.parameters.map((p: { name: string }) => p.name).sort();
		expect(auditParams).toEqual([
			"action",
			"cursor",
			"end_date",
			"key_id",
			"limit",
			"resource_id",
			"start_date",
		]);
	});
});
