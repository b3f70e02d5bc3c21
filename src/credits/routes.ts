import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { writeOnce } from "../http/idempotency";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { decimalPlaces } from "../lib/money";
import { currencyCode } from "../schemas/currency";
import { moneyInput } from "../schemas/numbers";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { createGrant, getGrant, listGrants, voidGrant } from "./grants";

export const CreditGrant = z
	.object({
		id: z.string().openapi({ example: "cgr_01jd0000000000000000000000" }),
		account_id: z.string(),
		amount: z.number().openapi({ example: 1000 }),
		remaining: z.number().openapi({ example: 640.5, description: "The sum of the grant's ledger." }),
		currency: z.string().openapi({ example: "USD", description: "The account's currency." }),
		expires_at: z.string().nullable(),
		description: z.string().nullable(),
		status: z.enum(["active", "depleted", "expired", "void"]),
		recurrence: z.enum(["monthly"]).nullable().openapi({
			description: "monthly: one grant of `amount` per billing period, made by the monthly run; null: once.",
		}),
		rollover_max: z.number().nullable().openapi({
			description: "The most of what a monthly grant leaves that is added to the next period's grant.",
		}),
		created_at: z.string(),
	})
	.openapi("CreditGrant");

const CreateCreditGrant = z
	.strictObject({
		amount: z
			.number()
			.positive()
			.max(1e15)
			.refine((x) => decimalPlaces(x) <= 12, "At most 12 decimal places.")
			.openapi({ example: 1000, description: "Major units of the account's currency, > 0." }),
		expires_at: z.iso
			.datetime({ offset: true })
			.optional()
			.openapi({ example: "2027-01-01T00:00:00Z", description: "In the future; never expires when absent." }),
		description: z.string().min(1).max(500).optional(),
		recurrence: z
			.enum(["monthly"])
			.nullable()
			.optional()
			.openapi({
				description:
					"monthly: this grant is for the current billing period (it expires when the next begins), and the " +
					"monthly run grants `amount` again for each next period right after invoicing the previous one. " +
					"Not with expires_at.",
			}),
		rollover_max: moneyInput()
			.nullable()
			.optional()
			.openapi({
				description:
					"With a recurrence only: what the previous period's grant has left once that period is invoiced, " +
					"up to this amount, is added to the next period's grant. ≥ 0.",
			}),
		currency: currencyCode().optional().openapi({
			example: "EUR",
			description:
				"The currency of the grant (default the account's): it pays only invoices in this currency.",
		}),
	})
	.superRefine((body, context) => {
		const recurring = body.recurrence !== undefined && body.recurrence !== null;
		if (!recurring && body.rollover_max !== undefined && body.rollover_max !== null) {
			context.addIssue({ code: "custom", path: ["rollover_max"], message: "only with a recurrence" });
		}
		if (recurring && body.expires_at !== undefined) {
			context.addIssue({
				code: "custom",
				path: ["expires_at"],
				message: "not with a recurrence: each monthly grant expires when its period ends",
			});
		}
	})
	.openapi("CreateCreditGrant");

const AccountParams = z.object({ account_id: z.string() });
const GrantParams = z.object({ account_id: z.string(), credit_grant_id: z.string() });

export const creditRoutes = apiRouter();

creditRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/accounts/{account_id}/credit-grants",
		operationId: "createCreditGrant",
		tags: ["Credits"],
		summary: "Grant prepaid credit to an account",
		description: "Credits pay the account's next invoices first, the grant expiring soonest first.",
		request: { params: AccountParams, body: { required: true, ...json(CreateCreditGrant) } },
		responses: {
			201: { description: "The grant", ...json(CreditGrant) },
			...errorResponses(...bodyErrors, 404),
		},
	}),
	async (c) => {
		const accountId = c.req.valid("param").account_id;
		const grant = await writeOnce(
			c,
			(mark) => createGrant({ ...scopeOf(c), accountId, input: c.req.valid("json"), mark }),
			([grantId]) => getGrant({ ...scopeOf(c), accountId, grantId: grantId as string }),
		);
		return c.json(grant, 201);
	},
);

creditRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/accounts/{account_id}/credit-grants",
		operationId: "listCreditGrants",
		tags: ["Credits"],
		summary: "List an account's credit grants",
		request: { params: AccountParams, query: PageQuery },
		responses: {
			200: { description: "Grants, newest first", ...json(pageSchema("credit_grants", CreditGrant)) },
			...errorResponses(400, 404),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listGrants({
			...scopeOf(c),
			accountId: c.req.valid("param").account_id,
			...query,
		});
		return c.json(pageOf("credit_grants", items, total, query), 200);
	},
);

creditRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/accounts/{account_id}/credit-grants/{credit_grant_id}/void",
		operationId: "voidCreditGrant",
		tags: ["Credits"],
		summary: "Void what is left of a credit grant",
		description:
			"Only while the grant has credit left; a depleted, expired or void grant answers 409. A monthly grant may " +
			"be voided also when depleted: that voids what is left and stops the recurrence.",
		request: { params: GrantParams },
		responses: { 200: { description: "The void grant", ...json(CreditGrant) }, ...errorResponses(404, 409) },
	}),
	async (c) => {
		const { account_id, credit_grant_id } = c.req.valid("param");
		const ids = { ...scopeOf(c), accountId: account_id, grantId: credit_grant_id };
		return c.json(
			await writeOnce(
				c,
				(mark) => voidGrant({ ...ids, mark }),
				() => getGrant(ids),
			),
			200,
		);
	},
);
