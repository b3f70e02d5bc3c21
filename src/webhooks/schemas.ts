import { z } from "@hono/zod-openapi";
import { pageQuery } from "../schemas/pages";
import { WEBHOOK_EVENT_KINDS } from "./outbox";
import { judgeReceiverUrl } from "./receiver-url";
import { SEND_ERROR_CLASSES } from "./send";

// Local receivers depend on where the Worker runs (ALLOW_LOCAL_WEBHOOK_URLS), which a schema cannot know: the body
// is judged here as if they were allowed, and the endpoint verbs judge the url again with the Worker's rules.
const LOCAL_ALLOWED = { allowLocal: true };

export const WebhookEventKindSchema = z.enum(WEBHOOK_EVENT_KINDS).openapi("WebhookEventKind");

const url = z
	.string()
	.max(2048)
	.superRefine((text, ctx) => {
		const verdict = judgeReceiverUrl(text, LOCAL_ALLOWED);
		if (!verdict.ok) ctx.addIssue({ code: "custom", message: verdict.reason });
	})
	.openapi({
		description:
			"An absolute https:// URL (https://host[:port][/path][?query]) whose host is a public host name or a public IP address, with no user name or password. Private, loopback, link-local, multicast, reserved and documentation IP addresses are refused, and so are host names that are local or special-use as written: a single label, a trailing dot, localhost, .local, .internal, .localdomain, .home.arpa, .test, .invalid, .example. localhost, 127.0.0.1 and [::1] (http or https) are allowed only where the service runs for local development.",
		example: "https://example.com/webhooks/billing",
	});

const events = z
	.array(WebhookEventKindSchema)
	.min(1, "Subscribe to at least one event kind.")
	.refine((kinds) => new Set(kinds).size === kinds.length, "Each event kind may appear only once.");

const description = z.string().max(1000).nullable();

export const WebhookEndpoint = z
	.object({
		id: z.string().openapi({ example: "whk_01jd0000000000000000000000" }),
		url: z.string(),
		events: z.array(WebhookEventKindSchema),
		description: z.string().nullable(),
		status: z.enum(["enabled", "disabled"]),
		created_at: z.string(),
	})
	.openapi("WebhookEndpoint");

export const CreatedWebhookEndpoint = WebhookEndpoint.extend({
	secret: z.string().nullable().openapi({
		description:
			"The signing secret, `whsec_` + base64 of 32 random bytes. Shown only in this response; `null` when the response is an idempotent replay.",
		example: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}),
}).openapi("CreatedWebhookEndpoint");

export const CreateWebhookEndpoint = z
	.strictObject({ url, events, description: description.optional() })
	.openapi("CreateWebhookEndpoint");

export const UpdateWebhookEndpoint = z
	.strictObject({
		url: url.optional(),
		events: events.optional(),
		description: description.optional(),
		status: z.enum(["enabled", "disabled"]).optional(),
	})
	.openapi("UpdateWebhookEndpoint");

export const WebhookDelivery = z
	.object({
		id: z.string().openapi({ example: "dlv_01jd0000000000000000000000" }),
		event_id: z.string().openapi({ example: "evt_01jd0000000000000000000000" }),
		event: z.string().openapi({ enum: [...WEBHOOK_EVENT_KINDS], example: "invoice.created" }),
		status: z.enum(["pending", "succeeded", "failed"]),
		attempts: z.number().int(),
		last_status_code: z.number().int().nullable(),
		last_error: z.string().nullable(),
		next_attempt_at: z
			.string()
			.nullable()
			.openapi({ description: "When the next attempt is due, while pending." }),
		created_at: z.string(),
		delivered_at: z.string().nullable(),
	})
	.openapi("WebhookDelivery");

export const TestWebhook = z
	.strictObject({ webhook_id: z.string().min(1), event: WebhookEventKindSchema })
	.openapi("TestWebhook");

export const WebhookTestResult = z
	.object({
		result: z.object({
			delivered: z.boolean(),
			status_code: z.number().int().nullable(),
			duration_ms: z.number().int(),
			error: z.enum(SEND_ERROR_CLASSES).nullable().openapi({
				description:
					"Why the send failed, as a fixed class (never the runtime's own message): the receiver answered with another status (http_status), did not answer within 30 s (timeout), the TLS handshake failed (tls_error), or no connection was made (connection_failed, also for a url the rules refuse).",
			}),
			delivery_id: z.string(),
		}),
	})
	.openapi("WebhookTestResult");

export const WebhookParams = z.object({ webhook_id: z.string() });
export const DeliveryParams = z.object({ webhook_id: z.string(), delivery_id: z.string() });
export const DeliveryQuery = z
	.strictObject({
		...pageQuery,
		status: z
			.enum(["pending", "succeeded", "failed"])
			.optional()
			.openapi({ description: "Only deliveries in this state." }),
	})
	.openapi("DeliveryQuery");
export const WebhookDeliveryWithPayload = WebhookDelivery.extend({
	payload: z
		.record(z.string(), z.unknown())
		.openapi({ description: "The body every attempt of this delivery sends: {id, event, timestamp, data}." }),
}).openapi("WebhookDeliveryWithPayload");
