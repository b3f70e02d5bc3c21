import { describe, expect, it } from "vitest";
import { call, createAccount, expectError, post } from "../helpers";
import { currentPeriod, customer, generateOne, instanceKey, sdkKey } from "../invoicing/fixtures";

// §37 on §1 and §14: a replay compares parsed JSON; an event's two keys must agree; no bytes is `{}`.

const withKey = (key: string, extra: Record<string, string> = {}) => ({
	headers: { "Idempotency-Key": key, "Content-Type": "application/json", ...extra },
});

describe("Idempotency-Key compares the request's parsed JSON", () => {
	it("the same fields in another order and other whitespace replay the first answer", async () => {
		const first = await call("POST", "/v1/accounts", {
			raw: '{"name":"Ordered","email":"o@example.com","billing_address":{"city":"Lyon","street":"1 rue"}}',
			...withKey("json-order"),
		});
		expect(first.status, JSON.stringify(first.body)).toBe(201);
		const again = await call("POST", "/v1/accounts", {
			raw: '{\n  "billing_address": { "street": "1 rue", "city": "Lyon" },\n  "email": "o@example.com",\n  "name": "Ordered"\n}',
			...withKey("json-order"),
		});
		expect(again.status).toBe(201);
		expect(again.headers.get("Idempotent-Replayed")).toBe("true");
		expect(again.body).toEqual(first.body);
	});

	it("other values are still another request: 409 idempotency_key_reused", async () => {
		await call("POST", "/v1/agents", { raw: '{"name":"One","type":"n8n"}', ...withKey("json-values") });
		const reused = await call("POST", "/v1/agents", {
			raw: '{"type":"n8n","name":"Two"}',
			...withKey("json-values"),
		});
		expectError(reused, 409, "idempotency_key_reused");
		const reordered = await call("POST", "/v1/agents", {
			raw: '{"metadata":{"b":[2,1]},"name":"One","type":"n8n"}',
			...withKey("json-values"),
		});
		expectError(reordered, 409, "idempotency_key_reused");
	});
});

describe("an event's idempotency_key and the Idempotency-Key header", () => {
	it("both given and different → 400, nothing stored; equal → one event", async () => {
		const { instances } = await customer({ base_fee: 1, charges: [] });
		const key = await sdkKey();
		const agent_key = instances[0] as string;
		for (const path of ["/v1/actions", "/v1/outcomes"]) {
			const body =
				path === "/v1/actions"
					? { agent_key, action_type: "call", idempotency_key: "body-key" }
					: { agent_key, outcome_type: "won", value: 1, idempotency_key: "body-key" };
			const differ = await post(path, body, { key, headers: { "Idempotency-Key": "header-key" } });
			expect(expectError(differ, 400, "validation_error").details?.[0]?.path).toBe("idempotency_key");
			const same = await post(path, body, { key, headers: { "Idempotency-Key": "body-key" } });
			expect(same.status, JSON.stringify(same.body)).toBe(201);
			const header = await post(
				path,
				{ ...body, idempotency_key: undefined },
				{ key, headers: { "Idempotency-Key": "body-key" } },
			);
			expect(header.status).toBe(200);
			expect(header.headers.get("Idempotent-Replayed")).toBe("true");
		}
	});
});

describe("a POST whose body fields are all optional takes no bytes at all as {}", () => {
	for (const contentType of [undefined, "application/json"]) {
		const label = contentType ?? "no Content-Type";
		it(`portal sessions, pay and cancel (${label})`, async () => {
			const headers: Record<string, string> = contentType ? { "Content-Type": contentType } : {};
			const account = await createAccount();
			const session = await call("POST", `/v1/accounts/${account.id}/portal-sessions`, { raw: "", headers });
			expect(session.status, JSON.stringify(session.body)).toBe(201);

			const { account: payer, subscription } = await customer({ base_fee: 5, charges: [] });
			const invoice = await generateOne(currentPeriod(), payer.id);
			const paid = await call("POST", `/v1/invoices/${invoice.id}/pay`, { raw: "", headers });
			expect(paid.status, JSON.stringify(paid.body)).toBe(200);
			expect(paid.body.payments[0]).toMatchObject({ kind: "payment", reference: null });

			const cancel = await call("POST", `/v1/subscriptions/${subscription.id}/cancel`, { raw: "", headers });
			expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
		});
	}

	it("a body with required fields and no bytes answers what is missing", async () => {
		const response = await call("POST", "/v1/agents", {
			raw: "",
			headers: { "Content-Type": "application/json" },
		});
		expectError(response, 400, "validation_error");
	});
});

void instanceKey;
