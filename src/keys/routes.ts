import { createRoute, z } from "@hono/zod-openapi";
import { revokeInRateLimiter } from "../durable-objects/rate-limiter/limits";
import { forgetCachedKey, OPERATOR_KEY_ID } from "../http/auth";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { responseCarriesSecret } from "../http/idempotency";
import { ADMIN } from "../http/permissions";
import { apiRouter } from "../http/router";
import { validationError } from "../lib/errors";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { createApiKey, listApiKeys, revokeApiKey } from "./keys";

const ApiKey = z
	.object({
		id: z.string().openapi({ example: "key_01jd0000000000000000000000" }),
		type: z.enum(["sdk", "api"]),
		environment: z.enum(["live", "test"]),
		permission: z.enum(["read-only", "read-write", "admin"]).nullable(),
		name: z.string().nullable(),
		prefix: z.string().openapi({ description: "The first characters of the key, for recognising it." }),
		created_at: z.string(),
		last_used_at: z.string().nullable(),
	})
	.openapi("ApiKey");

const CreatedApiKey = ApiKey.extend({
	key: z.string().nullable().openapi({
		description:
			"The full secret. Shown only in this response; `null` when the response is an idempotent replay.",
	}),
}).openapi("CreatedApiKey");

const CreateApiKey = z
	.strictObject({
		type: z.enum(["sdk", "api"]),
		environment: z.enum(["live", "test"]).optional(),
		permission: z.enum(["read-only", "read-write", "admin"]).optional(),
		name: z.string().min(1).max(200).optional(),
	})
	.openapi("CreateApiKey");

export const apiKeyRoutes = apiRouter();

apiKeyRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "post",
		path: "/api-keys",
		operationId: "createApiKey",
		tags: ["API keys"],
		summary: "Create an API or SDK key",
		description:
			"Keys are created in the caller's environment; naming the other environment answers 403 (only the operator key may create keys in either).",
		request: { body: { required: true, content: { "application/json": { schema: CreateApiKey } } } },
		responses: {
			201: {
				description: "The key, with its secret shown once",
				content: { "application/json": { schema: CreatedApiKey } },
			},
			...errorResponses(...bodyErrors),
		},
	}),
	async (c) => {
		responseCarriesSecret(c, "key");
		const key = await createApiKey({
			...scopeOf(c),
			input: c.req.valid("json"),
			operator: c.get("principal").keyId === OPERATOR_KEY_ID,
		});
		return c.json(key, 201);
	},
);

apiKeyRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "get",
		path: "/api-keys",
		operationId: "listApiKeys",
		tags: ["API keys"],
		summary: "List keys of this environment (never their secrets)",
		request: { query: PageQuery },
		responses: {
			200: {
				description: "Keys",
				content: { "application/json": { schema: pageSchema("api_keys", ApiKey) } },
			},
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listApiKeys({ ...scopeOf(c), ...query });
		return c.json(pageOf("api_keys", items, total, query), 200);
	},
);

apiKeyRoutes.openapi(
	createRoute({
		access: ADMIN,
		method: "delete",
		path: "/api-keys/{api_key_id}",
		operationId: "revokeApiKey",
		tags: ["API keys"],
		summary: "Revoke a key; it answers 401 from then on",
		request: { params: z.object({ api_key_id: z.string() }) },
		responses: { 204: { description: "Revoked" }, ...errorResponses(400, 404) },
	}),
	async (c) => {
		const { api_key_id: id } = c.req.valid("param");
		if (id === OPERATOR_KEY_ID) {
			throw validationError(
				"api_key_id",
				"The operator key is revoked by changing the ADMIN_API_KEY secret.",
			);
		}
		await revokeApiKey({ ...scopeOf(c), id });
		await revokeInRateLimiter(c.env, id);
		forgetCachedKey(id);
		return c.body(null, 204);
	},
);
