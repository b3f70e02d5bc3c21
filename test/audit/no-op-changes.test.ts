/**
 * A write that changes nothing records nothing (docs/audit-log.md): every PATCH of the OpenAPI document sent with
 * the values the resource already has answers 200 with the resource and writes no audit record (nor bumps the row);
 * archiving or re-assigning what already is so records nothing either. And invoice.finalized records the number
 * the finalize assigned.
 */
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { call, createAccount, createAgent, get, post } from "../helpers";
import { currentPeriod, generateOne } from "../invoicing/fixtures";
import { createPlan, subscribe, uniqueKey } from "../subscriptions/fixtures";
import { createEndpoint } from "../webhooks/fixtures";
import { recordCount, recordsOf } from "./fixtures";

afterEach(() => {
	vi.restoreAllMocks();
});

interface NoOp {
	path: string;
	/** What the resource already holds. */
	body: Record<string, unknown>;
}

/** Per PATCH route: a resource, and a body that repeats its values. Add the new PATCH routes here. */
const SAME_VALUES: Record<string, () => Promise<NoOp>> = {
	"PATCH /v1/agents/{agent_id}": async () => {
		const agent = await createAgent(undefined, { name: "Same", description: "As before" });
		return { path: `/v1/agents/${agent.id}`, body: { name: "Same", description: "As before" } };
	},
	"PATCH /v1/accounts/{account_id}": async () => {
		const account = await createAccount(undefined, { name: "Same Co", email: "same@acme.test" });
		return {
			path: `/v1/accounts/${account.id}`,
			body: {
				name: "Same Co",
				email: "same@acme.test",
				net_terms_days: 30,
				invoice_grace_days: 0,
				parent_account_id: null,
				billing: "self",
				use_parent_credits: false,
			},
		};
	},
	"PATCH /v1/subscriptions/{subscription_id}": async () => {
		const key = uniqueKey();
		const { subscription } = await subscribe([key]);
		return { path: `/v1/subscriptions/${subscription.id}`, body: { agent_instance_ids: [key] } };
	},
	"PATCH /v1/webhooks/{webhook_id}": async () => {
		const endpoint = await createEndpoint({ description: "Same hook" });
		return {
			path: `/v1/webhooks/${endpoint.id}`,
			body: { url: endpoint.url, events: endpoint.events, description: "Same hook", status: "enabled" },
		};
	},
};

async function patchRoutes(): Promise<string[]> {
	const document = (await get("/v1/openapi.json", { key: null })).body as {
		paths: Record<string, Record<string, unknown>>;
	};
	return Object.entries(document.paths).flatMap(([path, operations]) =>
		"patch" in operations ? [`PATCH ${path}`] : [],
	);
}

async function storedRow(path: string): Promise<unknown> {
	const [, , collection, id] = path.split("/");
	const table = {
		agents: "agents",
		accounts: "accounts",
		subscriptions: "subscriptions",
		webhooks: "webhook_endpoints",
	}[collection as string];
	return env.DB.prepare(`SELECT * FROM ${table} WHERE id = ?`).bind(id).first();
}

describe("a PATCH that changes nothing", async () => {
	const routes = await patchRoutes();

	it("has a same-values call for every PATCH of the OpenAPI document", () => {
		expect(routes.filter((route) => !(route in SAME_VALUES))).toEqual([]);
		expect(routes.length).toBeGreaterThanOrEqual(4);
	});

	it.each(routes.filter((route) => route in SAME_VALUES))("%s writes no audit record", async (route) => {
		const noOp = await (SAME_VALUES[route] as () => Promise<NoOp>)();
		const before = await get(noOp.path);
		const row = await storedRow(noOp.path);
		const count = await recordCount();
		const response = await call("PATCH", noOp.path, { body: noOp.body });
		expect(response.status, JSON.stringify(response.body)).toBe(200);
		expect(response.body).toEqual(before.body);
		expect(await recordCount()).toBe(count);
		expect(await storedRow(noOp.path)).toEqual(row);

		// A real change is still recorded, with only what changed.
		const [field, value] = Object.entries(noOp.body)[0] as [string, unknown];
		const changedValue = Array.isArray(value) ? [...value, uniqueKey()] : `${value}-changed`;
		const body = field === "url" ? { description: "Changed" } : { [field]: changedValue };
		expect((await call("PATCH", noOp.path, { body })).status).toBe(200);
		const records = await recordsOf(noOp.path.split("/")[3]);
		expect(Object.keys(records.at(-1)?.changes ?? {})).toEqual(Object.keys(body));
	});
});

describe("other writes that change nothing", () => {
	it("archiving an archived coupon or rate plan records nothing more", async () => {
		const coupon = await post("/v1/coupons", {
			code: `NOOP${uniqueKey()}`.slice(0, 20),
			percent_off: 10,
			duration: "once",
		});
		expect(coupon.status, JSON.stringify(coupon.body)).toBe(201);
		const plan = await createPlan();
		for (const path of [`/v1/coupons/${coupon.body.id}`, `/v1/pricing/rate-plans/${plan.id}`]) {
			expect((await call("DELETE", path)).status).toBe(200);
			const count = await recordCount();
			expect((await call("DELETE", path)).status).toBe(200);
			expect(await recordCount()).toBe(count);
		}
		expect((await recordsOf(coupon.body.id)).map((r) => r.action)).toEqual([
			"coupon.created",
			"coupon.archived",
		]);
	});
});

describe("invoice.finalized", () => {
	it("records the number the finalize assigned", async () => {
		const account = await createAccount(undefined, { invoice_grace_days: 3 });
		const plan = await createPlan();
		const made = await post("/v1/subscriptions", {
			account_id: account.id,
			rate_plan_id: plan.id,
			agent_instance_ids: [uniqueKey()],
		});
		expect(made.status, JSON.stringify(made.body)).toBe(201);
		const draft = await generateOne(currentPeriod(), account.id);
		expect(draft.number).toBeNull();
		const finalized = await post(`/v1/invoices/${draft.id}/finalize`);
		expect(finalized.status, JSON.stringify(finalized.body)).toBe(200);
		expect(finalized.body.number).toMatch(/^INV-\d{6}$/);
		const record = (await recordsOf(draft.id)).find((r) => r.action === "invoice.finalized");
		expect(record?.changes.number).toEqual([null, finalized.body.number]);
		expect(record?.changes.status).toEqual(["draft", finalized.body.status]);
	});
});
