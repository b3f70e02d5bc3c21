import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createAccount, createKey, expectError, get, patch, post } from "../helpers";

// Account hierarchies (docs/account-hierarchies.md): two levels, no cycle, same environment; nothing stored on error.

const stored = async (id: string) =>
	env.DB.prepare("SELECT parent_account_id, billing, use_parent_credits FROM accounts WHERE id = ?1")
		.bind(id)
		.first();
const countAccounts = async () =>
	((await env.DB.prepare("SELECT count(*) AS n FROM accounts").first()) as { n: number }).n;

describe("account hierarchy fields", () => {
	it("an account has no parent, billing self and no shared credits by default", async () => {
		const account = await createAccount();
		expect(account).toMatchObject({ parent_account_id: null, billing: "self", use_parent_credits: false });
	});

	it("a child is created under a parent, with billing parent, and listed as the parent's child", async () => {
		const parent = await createAccount();
		const response = await post("/v1/accounts", {
			name: "Child",
			email: "child@acme.test",
			parent_account_id: parent.id,
			billing: "parent",
		});
		expect(response.status, JSON.stringify(response.body)).toBe(201);
		expect(response.body).toMatchObject({
			parent_account_id: parent.id,
			billing: "parent",
			use_parent_credits: false,
		});
		expect(await stored(response.body.id)).toEqual({
			parent_account_id: parent.id,
			billing: "parent",
			use_parent_credits: 0,
		});
		expect((await get(`/v1/accounts/${response.body.id}`)).body.billing).toBe("parent");
		const children = await get(`/v1/accounts?parent_account_id=${parent.id}`);
		expect(children.body).toMatchObject({ total: 1, accounts: [{ id: response.body.id }] });
	});

	it("PATCH sets, changes and removes a parent", async () => {
		const parent = await createAccount();
		const child = await createAccount();
		const set = await patch(`/v1/accounts/${child.id}`, {
			parent_account_id: parent.id,
			use_parent_credits: true,
		});
		expect(set.status, JSON.stringify(set.body)).toBe(200);
		expect(set.body).toMatchObject({
			parent_account_id: parent.id,
			billing: "self",
			use_parent_credits: true,
		});
		const removed = await patch(`/v1/accounts/${child.id}`, { parent_account_id: null });
		expect(removed.body).toMatchObject({ parent_account_id: null });
		expect(await stored(child.id)).toMatchObject({ parent_account_id: null });
	});
});

describe("account hierarchy errors: 409, nothing stored", () => {
	it("an unknown parent, on create and on PATCH", async () => {
		const before = await countAccounts();
		const created = await post("/v1/accounts", {
			name: "C",
			email: "c@acme.test",
			parent_account_id: "acct_nope",
		});
		expectError(created, 409, "conflict");
		expect(await countAccounts()).toBe(before);
		const child = await createAccount();
		expectError(await patch(`/v1/accounts/${child.id}`, { parent_account_id: "acct_nope" }), 409, "conflict");
		expect(await stored(child.id)).toMatchObject({ parent_account_id: null });
	});

	it("a parent in the other environment", async () => {
		const testKey = await createKey("admin", "test");
		const testParent = await createAccount(testKey);
		const child = await createAccount();
		expectError(
			await patch(`/v1/accounts/${child.id}`, { parent_account_id: testParent.id }),
			409,
			"conflict",
		);
		expect(await stored(child.id)).toMatchObject({ parent_account_id: null });
		const before = await countAccounts();
		expectError(
			await post("/v1/accounts", { name: "C", email: "c@acme.test", parent_account_id: testParent.id }),
			409,
			"conflict",
		);
		expect(await countAccounts()).toBe(before);
	});

	it("a parent that has a parent (three levels)", async () => {
		const top = await createAccount();
		const middle = await createAccount(undefined, { parent_account_id: top.id });
		const before = await countAccounts();
		expectError(
			await post("/v1/accounts", { name: "C", email: "c@acme.test", parent_account_id: middle.id }),
			409,
			"conflict",
		);
		expect(await countAccounts()).toBe(before);
		const other = await createAccount();
		expectError(await patch(`/v1/accounts/${other.id}`, { parent_account_id: middle.id }), 409, "conflict");
		expect(await stored(other.id)).toMatchObject({ parent_account_id: null });
	});

	it("a parent with children cannot become a child", async () => {
		const parent = await createAccount();
		await createAccount(undefined, { parent_account_id: parent.id });
		const other = await createAccount();
		expectError(await patch(`/v1/accounts/${parent.id}`, { parent_account_id: other.id }), 409, "conflict");
		expect(await stored(parent.id)).toMatchObject({ parent_account_id: null });
	});

	it("a cycle: an account as its own parent, or two accounts each the other's", async () => {
		const a = await createAccount();
		expectError(await patch(`/v1/accounts/${a.id}`, { parent_account_id: a.id }), 409, "conflict");
		const b = await createAccount(undefined, { parent_account_id: a.id });
		expectError(await patch(`/v1/accounts/${a.id}`, { parent_account_id: b.id }), 409, "conflict");
		expect(await stored(a.id)).toMatchObject({ parent_account_id: null });
		expect(await stored(b.id)).toMatchObject({ parent_account_id: a.id });
	});

	it("billing parent without a parent, on create, on PATCH, and by removing the parent", async () => {
		const before = await countAccounts();
		expectError(
			await post("/v1/accounts", { name: "C", email: "c@acme.test", billing: "parent" }),
			409,
			"conflict",
		);
		expect(await countAccounts()).toBe(before);
		const lone = await createAccount();
		expectError(await patch(`/v1/accounts/${lone.id}`, { billing: "parent" }), 409, "conflict");
		expect(await stored(lone.id)).toMatchObject({ billing: "self" });
		const parent = await createAccount();
		const child = await createAccount(undefined, { parent_account_id: parent.id, billing: "parent" });
		expectError(await patch(`/v1/accounts/${child.id}`, { parent_account_id: null }), 409, "conflict");
		expect(await stored(child.id)).toMatchObject({ parent_account_id: parent.id, billing: "parent" });
		const both = await patch(`/v1/accounts/${child.id}`, { parent_account_id: null, billing: "self" });
		expect(both.status).toBe(200);
	});

	it("two accounts made children of each other at once: at most one succeeds", async () => {
		const a = await createAccount();
		const b = await createAccount();
		const [ab, ba] = await Promise.all([
			patch(`/v1/accounts/${a.id}`, { parent_account_id: b.id }),
			patch(`/v1/accounts/${b.id}`, { parent_account_id: a.id }),
		]);
		expect([ab.status, ba.status].sort()).toEqual([200, 409]);
		const rows = [await stored(a.id), await stored(b.id)] as { parent_account_id: string | null }[];
		expect(rows.filter((row) => row.parent_account_id !== null)).toHaveLength(1);
	});

	it("bad types: 400", async () => {
		const a = await createAccount();
		expectError(await patch(`/v1/accounts/${a.id}`, { billing: "other" }), 400, "validation_error");
		expectError(await patch(`/v1/accounts/${a.id}`, { use_parent_credits: "yes" }), 400, "validation_error");
		expectError(await patch(`/v1/accounts/${a.id}`, { parent_account_id: 5 }), 400, "validation_error");
	});
});
