/**
 * POST /v1/integrations/stripe/webhook (docs/payments.md#stripes-webhooks): Stripe's events, with no API key —
 * the Stripe-Signature header, verified against the webhook secret of each environment, is the authentication,
 * and the secret that verifies names the environment. Mounted before /v1's gate. Applying an event is loaded only
 * when one arrives.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ApiError, ErrorBody } from "../../http/errors";
import { json } from "../../http/openapi";
import { newRouter } from "../../http/router";
import { signedEnvironment } from "../../payment-provider/stripe/signature";

const MAX_BODY_BYTES = 1024 * 1024;

const Received = z.object({ received: z.literal(true) }).openapi("StripeWebhookReceived");

export const stripeWebhookRoutes = newRouter();

stripeWebhookRoutes.openapi(
	createRoute({
		method: "post",
		path: "/v1/integrations/stripe/webhook",
		operationId: "receiveStripeWebhook",
		tags: ["Payments"],
		summary: "Stripe's webhook events (signed by Stripe; no API key)",
		description:
			"Point a Stripe webhook endpoint here, with the events payment_intent.succeeded, " +
			"payment_intent.payment_failed and checkout.session.completed. The Stripe-Signature header must verify " +
			"with STRIPE_WEBHOOK_SECRET (live) or STRIPE_TEST_WEBHOOK_SECRET (test) within 5 minutes; each event is " +
			"applied once, and unknown events are acknowledged and ignored.",
		security: [],
		request: {
			headers: z.object({
				"stripe-signature": z.string().openapi({
					example: "t=1795255200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
				}),
			}),
		},
		responses: {
			200: { description: "Received (applied now, earlier, or ignored)", ...json(Received) },
			400: { description: "Missing, wrong or stale signature, or not an event", ...json(ErrorBody) },
			500: { description: "Not applied; Stripe delivers it again", ...json(ErrorBody) },
		},
	}),
	async (c) => {
		const body = await c.req.text();
		if (body.length > MAX_BODY_BYTES) throw new ApiError("validation_error", "The event is too large.");
		const environment = await signedEnvironment(c.env, c.req.header("Stripe-Signature"), body);
		if (environment === null) {
			throw new ApiError("validation_error", "The Stripe-Signature header is missing, wrong or too old.");
		}
		let event: { id?: unknown; type?: unknown; data?: { object?: unknown } };
		try {
			event = JSON.parse(body);
		} catch {
			throw new ApiError("invalid_json", "The event is not JSON.");
		}
		if (
			typeof event.id !== "string" ||
			typeof event.type !== "string" ||
			typeof event.data?.object !== "object"
		) {
			throw new ApiError("validation_error", "Not a Stripe event: id, type and data.object are required.");
		}
		const { applyStripeEvent } = await import("./events");
		await applyStripeEvent(c.env, environment, event as Parameters<typeof applyStripeEvent>[2]);
		return c.json({ received: true as const }, 200);
	},
);
