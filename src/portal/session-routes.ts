/** Minting and revoking customer portal links, under /v1 with the operator's API keys (docs/portal.md). */
import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { responseCarriesSecret } from "../http/idempotency";
import { json } from "../http/openapi";
import { WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import {
	createPortalSession,
	DEFAULT_EXPIRES_IN,
	MAX_EXPIRES_IN,
	MIN_EXPIRES_IN,
	revokePortalSession,
} from "./sessions";

const CreatePortalSession = z
	.strictObject({
		expires_in: z
			.number()
			.int("Must be a whole number of seconds.")
			.min(MIN_EXPIRES_IN)
			.max(MAX_EXPIRES_IN)
			.optional()
			.openapi({
				example: 3600,
				description: `Seconds the link works, ${MIN_EXPIRES_IN}–${MAX_EXPIRES_IN} (default ${DEFAULT_EXPIRES_IN}).`,
			}),
	})
	.openapi("CreatePortalSession");

const PortalSession = z
	.object({
		id: z.string().openapi({ example: "pss_01jd0000000000000000000000" }),
		account_id: z.string(),
		token: z.string().nullable().openapi({
			example: "pst_3q2-7wE_bX0l9cYk1mN8rT5vW3yE6uQ4aS2dF7gH1jK",
			description:
				"The customer's bearer token for /portal/api. Shown only in this response; `null` when the response is an idempotent replay.",
		}),
		url: z.string().nullable().openapi({
			example: "https://billing.example.com/portal#token=pst_3q2-7wE_bX0l9cYk1mN8rT5vW3yE6uQ4aS2dF7gH1jK",
			description:
				"The page /portal with the token in its fragment (never sent to a server). `null` in an idempotent replay.",
		}),
		expires_at: z.string().openapi({ description: "created_at plus expires_in." }),
		created_at: z.string(),
	})
	.openapi("PortalSession");

export const portalSessionRoutes = apiRouter();

portalSessionRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/accounts/{account_id}/portal-sessions",
		operationId: "createPortalSession",
		tags: ["Accounts"],
		summary: "Mint a customer portal link for an account",
		description:
			"A short-lived, read-only view of this account alone: its usage and amount so far this period, alerts, " +
			"credits, invoices with their PDFs and payments. Send the url to the customer; revoke it with " +
			"DELETE /v1/portal-sessions/{portal_session_id}.",
		request: {
			params: z.object({ account_id: z.string() }),
			body: { required: false, ...json(CreatePortalSession) },
		},
		responses: {
			201: { description: "The session, with its token and url shown once", ...json(PortalSession) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		responseCarriesSecret(c, "token");
		responseCarriesSecret(c, "url");
		const input = (c.req.valid("json") as z.infer<typeof CreatePortalSession> | undefined) ?? {};
		const session = await createPortalSession({
			...scopeOf(c),
			accountId: c.req.valid("param").account_id,
			expiresIn: input.expires_in,
			origin: new URL(c.req.url).origin,
		});
		return c.json(session, 201);
	},
);

portalSessionRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "delete",
		path: "/portal-sessions/{portal_session_id}",
		operationId: "revokePortalSession",
		tags: ["Accounts"],
		summary: "Revoke a customer portal link; its token answers 401 from then on",
		request: { params: z.object({ portal_session_id: z.string() }) },
		responses: { 204: { description: "Revoked" }, ...errorResponses(404) },
	}),
	async (c) => {
		await revokePortalSession({
			...scopeOf(c),
			id: c.req.valid("param").portal_session_id,
		});
		return c.body(null, 204);
	},
);
