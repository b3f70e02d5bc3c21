/** A subscription's billing currency as its views and its subscription.* webhook events carry it. */
import { describe, expect, it } from "vitest";
import { get, patch, post } from "../helpers";
import { instanceKey } from "../invoicing/fixtures";
import { outboxEvents } from "../subscriptions/fixtures";
import { foreignCustomer } from "./fixtures";

describe("billing_currency on subscription views and webhooks", () => {
	it("is in the view and in subscription.created, .updated and .cancelled", async () => {
		const { subscription } = await foreignCustomer("USD", "EUR", {}, { billing_currency: "JPY" });
		expect(subscription.billing_currency).toBe("JPY");
		expect((await get(`/v1/subscriptions/${subscription.id}`)).body.billing_currency).toBe("JPY");
		const changed = await patch(`/v1/subscriptions/${subscription.id}`, {
			agent_instance_ids: [instanceKey()],
		});
		expect(changed.status, JSON.stringify(changed.body)).toBe(200);
		expect(changed.body.billing_currency).toBe("JPY");
		// Never changed by a PATCH.
		const refused = await patch(`/v1/subscriptions/${subscription.id}`, { billing_currency: "EUR" });
		expect(refused.status).toBe(400);
		const cancelled = await post(`/v1/subscriptions/${subscription.id}/cancel`, {});
		expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
		for (const kind of ["subscription.created", "subscription.updated", "subscription.cancelled"]) {
			const events = await outboxEvents(kind, (data) => data.subscription_id === subscription.id);
			expect(events.length, kind).toBe(1);
			expect(events[0]?.data.billing_currency, kind).toBe("JPY");
		}
	});
});
