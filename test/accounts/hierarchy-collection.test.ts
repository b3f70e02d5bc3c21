import { env } from "cloudflare:workers";
import { it } from "vitest";
import { createAccount, get, patch, post } from "../helpers";
import { createPlan, currentPeriod, generateOne, instanceKey, subscribe } from "../invoicing/fixtures";
import { asked, testKey } from "../payments/fixtures";
import { describeWithStripe, expect, sentToStripe } from "../payments/stripe";

// billing 'parent' through Stripe (docs/account-hierarchies.md): the parent's customer and payment method collect
// the child's invoice, and the parent's block_on_failed_payment blocks the child's instances.

async function parentOnStripe(block: boolean) {
	const key = await testKey();
	const parent = await createAccount(key, { name: "Holding" });
	const onStripe = await patch(
		`/v1/accounts/${parent.id}`,
		{ payment_provider: "stripe", stripe_payment_method_id: "pm_card_visa", block_on_failed_payment: block },
		{ key },
	);
	expect(onStripe.status, JSON.stringify(onStripe.body)).toBe(200);
	const child = await createAccount(key, { name: "Sub", parent_account_id: parent.id, billing: "parent" });
	const plan = await createPlan({ base_fee: 42.5, charges: [] }, key);
	const instance = instanceKey();
	await subscribe(child.id, plan.id, [instance], key);
	const invoice = await generateOne(currentPeriod(), child.id, key);
	return { key, parent: onStripe.body, child, invoice, instance };
}

describeWithStripe("a child billed to its parent, collected through Stripe", () => {
	it("the parent's Stripe customer and payment method are asked for the child's invoice", async () => {
		const { parent, child, invoice } = await parentOnStripe(false);
		expect(invoice).toMatchObject({ account_id: child.id, payer_account_id: parent.id });
		const collected = await asked(invoice.id);
		expect(collected.collection).toMatchObject({ provider: "stripe", status: "pending" });
		const [request] = (await sentToStripe(invoice.id)).filter((r) => r.path === "/v1/payment_intents");
		expect(request?.form.get("customer")).toBe(parent.stripe_customer_id);
		expect(request?.form.get("payment_method")).toBe("pm_card_visa");
		expect(request?.form.get("amount")).toBe("4250");
	});

	it("the parent's block_on_failed_payment blocks the child's instances while the collection has failed", async () => {
		const { key, invoice, instance } = await parentOnStripe(true);
		await asked(invoice.id);
		const sdk = (await post("/v1/api-keys", { type: "sdk", environment: "test" }, { key })).body
			.key as string;
		expect((await get(`/v1/entitlements?agent_key=${instance}`, { key: sdk })).body.allowed).toBe(true);
		// Every retry failed (as Stripe's last payment_intent.payment_failed leaves it, docs/payments.md#dunning).
		await env.DB.prepare("UPDATE invoices SET collection_status = 'failed' WHERE id = ?1")
			.bind(invoice.id)
			.run();
		const entitlement = await get(`/v1/entitlements?agent_key=${instance}`, { key: sdk });
		expect(entitlement.body).toMatchObject({ allowed: false, blocked_by: [invoice.id] });
	});
});
