import { createRoute } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { responseCarriesSecret } from "../http/idempotency";
import { json } from "../http/openapi";
import { ADMIN } from "../http/permissions";
import { apiRouter } from "../http/router";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { getDelivery, listDeliveries, retryDelivery } from "./deliveries";
import {
	createWebhookEndpoint,
	deleteWebhookEndpoint,
	getWebhookEndpoint,
	listWebhookEndpoints,
	updateWebhookEndpoint,
} from "./endpoints";
import { receiverUrlRules } from "./receiver-url";
import {
	CreatedWebhookEndpoint,
	CreateWebhookEndpoint,
	DeliveryParams,
	DeliveryQuery,
	TestWebhook,
	UpdateWebhookEndpoint,
	WebhookDelivery,
	WebhookDeliveryWithPayload,
	WebhookEndpoint,
	WebhookParams,
	WebhookTestResult,
} from "./schemas";
import { sendTestEvent } from "./test-send";

const tags = ["Webhooks"];

export const webhookRoutes = apiRouter();

// Registered before the /webhooks/{webhook_id} routes, so "test" is never taken for an id.
webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "post",
		path: "/webhooks/test",
		operationId: "testWebhook",
		tags,
		summary: 'Send a sample event of a kind to an endpoint now (with "test": true; not retried)',
		request: { body: { required: true, ...json(TestWebhook) } },
		responses: {
			200: { description: "What the receiver answered", ...json(WebhookTestResult) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const { webhook_id, event } = c.req.valid("json");
		const result = await sendTestEvent({
			...scopeOf(c),
			env: c.env,
			webhookId: webhook_id,
			event,
		});
		return c.json({ result }, 200);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "post",
		path: "/webhooks",
		operationId: "createWebhook",
		tags,
		summary: "Create a webhook endpoint",
		request: { body: { required: true, ...json(CreateWebhookEndpoint) } },
		responses: {
			201: {
				description: "The endpoint, with its signing secret shown once",
				...json(CreatedWebhookEndpoint),
			},
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		responseCarriesSecret(c, "secret");
		const endpoint = await createWebhookEndpoint({
			...scopeOf(c),
			env: c.env,
			input: c.req.valid("json"),
			rules: receiverUrlRules(c.env),
		});
		return c.json(endpoint, 201);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/webhooks",
		operationId: "listWebhooks",
		tags,
		summary: "List webhook endpoints (never their secrets)",
		request: { query: PageQuery },
		responses: {
			200: { description: "Endpoints", ...json(pageSchema("webhooks", WebhookEndpoint)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listWebhookEndpoints({
			...scopeOf(c),
			...query,
		});
		return c.json(pageOf("webhooks", items, total, query), 200);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/webhooks/{webhook_id}",
		operationId: "getWebhook",
		tags,
		summary: "Get a webhook endpoint (without its secret)",
		request: { params: WebhookParams },
		responses: { 200: { description: "The endpoint", ...json(WebhookEndpoint) }, ...errorResponses(404) },
	}),
	async (c) => {
		const { view } = await getWebhookEndpoint({
			...scopeOf(c),
			id: c.req.valid("param").webhook_id,
		});
		return c.json(view, 200);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "patch",
		path: "/webhooks/{webhook_id}",
		operationId: "updateWebhook",
		tags,
		summary: "Change an endpoint's url, events, description or status",
		request: { params: WebhookParams, body: { required: true, ...json(UpdateWebhookEndpoint) } },
		responses: {
			200: { description: "The endpoint", ...json(WebhookEndpoint) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const endpoint = await updateWebhookEndpoint({
			...scopeOf(c),
			id: c.req.valid("param").webhook_id,
			input: c.req.valid("json"),
			rules: receiverUrlRules(c.env),
		});
		return c.json(endpoint, 200);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "delete",
		path: "/webhooks/{webhook_id}",
		operationId: "deleteWebhook",
		tags,
		summary: "Delete an endpoint and its delivery log",
		request: { params: WebhookParams },
		responses: { 204: { description: "Deleted" }, ...errorResponses(404) },
	}),
	async (c) => {
		await deleteWebhookEndpoint({
			...scopeOf(c),
			id: c.req.valid("param").webhook_id,
		});
		return c.body(null, 204);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/webhooks/{webhook_id}/deliveries",
		operationId: "listWebhookDeliveries",
		tags,
		summary: "The delivery log of an endpoint",
		request: { params: WebhookParams, query: DeliveryQuery },
		responses: {
			200: { description: "Deliveries", ...json(pageSchema("deliveries", WebhookDelivery)) },
			...errorResponses(400, 404),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listDeliveries({
			...scopeOf(c),
			endpointId: c.req.valid("param").webhook_id,
			...query,
		});
		return c.json(pageOf("deliveries", items, total, query), 200);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/webhooks/{webhook_id}/deliveries/{delivery_id}",
		operationId: "getWebhookDelivery",
		tags,
		summary: "One delivery, with the payload its attempts send",
		request: { params: DeliveryParams },
		responses: {
			200: { description: "The delivery and its payload", ...json(WebhookDeliveryWithPayload) },
			...errorResponses(404),
		},
	}),
	async (c) => {
		const { webhook_id, delivery_id } = c.req.valid("param");
		const delivery = await getDelivery({
			...scopeOf(c),
			endpointId: webhook_id,
			deliveryId: delivery_id,
		});
		return c.json(delivery, 200);
	},
);

webhookRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "post",
		path: "/webhooks/{webhook_id}/deliveries/{delivery_id}/retry",
		operationId: "retryWebhookDelivery",
		tags,
		summary: "Queue a delivery again now (a failed one becomes pending)",
		request: { params: DeliveryParams },
		responses: {
			200: { description: "The delivery, pending", ...json(WebhookDelivery) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const { webhook_id, delivery_id } = c.req.valid("param");
		const delivery = await retryDelivery({
			...scopeOf(c),
			env: c.env,
			endpointId: webhook_id,
			deliveryId: delivery_id,
		});
		return c.json(delivery, 200);
	},
);
