import { createRoute, z } from "@hono/zod-openapi";
import { scopeOf } from "../http/context";
import { bodyErrors, errorResponses } from "../http/errors";
import { json } from "../http/openapi";
import { READ, WRITE } from "../http/permissions";
import { apiRouter } from "../http/router";
import { isCurrencyCode } from "../lib/money";
import { PageQuery, pageOf, pageSchema } from "../schemas/pages";
import { createAccount, getAccount, listAccounts, updateAccount } from "./accounts";

const BillingAddress = z
	.strictObject({
		street: z.string().max(500).optional(),
		city: z.string().max(200).optional(),
		state: z.string().max(200).optional(),
		zip: z.string().max(50).optional(),
		country: z.string().max(100).optional(),
	})
	.openapi("BillingAddress");

const Account = z
	.object({
		id: z.string().openapi({ example: "acct_01jd0000000000000000000000" }),
		name: z.string(),
		email: z.string(),
		billing_address: BillingAddress.nullable(),
		currency: z.string().openapi({ example: "USD" }),
		external_id: z.string().nullable(),
		net_terms_days: z.number().int().openapi({ example: 30, description: "Days from issue to due date." }),
		invoice_grace_days: z.number().int().openapi({
			example: 0,
			description: "Days a period's invoice stays a draft before it is finalized; 0: issued at once.",
		}),
		payment_provider: z.enum(["manual", "stripe"]).openapi({
			description: "stripe: invoices are collected through Stripe (docs/payments.md); manual: paid by hand.",
		}),
		stripe_customer_id: z.string().nullable().openapi({ example: "cus_Qx0000000000" }),
		stripe_payment_method_id: z.string().nullable().openapi({ example: "pm_1Qx0000000000000" }),
		block_on_failed_payment: z.boolean().openapi({
			description: "true: while an invoice's collection has failed, entitlements answer allowed: false.",
		}),
		parent_account_id: z
			.string()
			.nullable()
			.openapi({ description: "Its parent account (two levels at most)." }),
		billing: z.enum(["self", "parent"]).openapi({
			description: "parent: its invoices are paid by the parent (credits, payment method); self: by itself.",
		}),
		use_parent_credits: z.boolean().openapi({
			description: "With billing self: the parent's credit grants pay what its own leave.",
		}),
		created_at: z.string(),
	})
	.openapi("Account");

const name = z
	.string()
	.min(1)
	.max(200)
	.refine((s) => s.trim().length > 0, "Must not be blank.");
const email = z.email("Must be a valid e-mail address.").max(320);
const externalId = z.string().min(1).max(200).nullable();
const netTermsDays = z
	.number()
	.int("Must be a whole number of days.")
	.min(0)
	.max(365)
	.openapi({ description: "Days from an invoice's issue to its due date (0–365, default 30)." });
const invoiceGraceDays = z
	.number()
	.int("Must be a whole number of days.")
	.min(0)
	.max(30)
	.openapi({
		description:
			"0–30, default 0. More than 0: a period's regular invoice is made as a draft, updated by late usage, " +
			"and finalized that many days after the period ends (or by hand).",
	});

const stripeId = (prefix: string) =>
	z
		.string()
		.min(1)
		.max(255)
		.regex(/^[A-Za-z0-9_]+$/, "Must be a Stripe id.")
		.nullable()
		.openapi({ example: `${prefix}_1Qx0000000000000` });
const paymentFields = {
	payment_provider: z
		.enum(["manual", "stripe"])
		.optional()
		.openapi({
			description:
				"stripe: collect invoices through Stripe (409 when the environment has no Stripe key); makes a Stripe " +
				"customer from the account when it has none. Default manual.",
		}),
	stripe_customer_id: stripeId("cus").optional(),
	stripe_payment_method_id: stripeId("pm").optional(),
	block_on_failed_payment: z.boolean().optional(),
};
const hierarchyFields = {
	parent_account_id: z
		.string()
		.min(1)
		.max(200)
		.nullable()
		.optional()
		.openapi({
			description:
				"The parent account, in the same environment and without a parent itself (else 409). An account " +
				"with children cannot become a child (409).",
		}),
	billing: z
		.enum(["self", "parent"])
		.optional()
		.openapi({ description: "Default self. parent: the parent pays its invoices (409 without a parent)." }),
	use_parent_credits: z.boolean().optional().openapi({
		description: "Default false. true: the parent's credit grants pay what the account's own grants leave.",
	}),
};

const CreateAccount = z
	.strictObject({
		name,
		email,
		billing_address: BillingAddress.nullable().optional(),
		currency: z
			.string()
			.refine(isCurrencyCode, "Must be an ISO 4217 currency code in upper case.")
			.optional(),
		external_id: externalId.optional(),
		net_terms_days: netTermsDays.optional(),
		invoice_grace_days: invoiceGraceDays.optional(),
		...paymentFields,
		...hierarchyFields,
	})
	.openapi("CreateAccount");

const UpdateAccount = z
	.strictObject({
		name: name.optional(),
		email: email.optional(),
		billing_address: BillingAddress.nullable().optional(),
		external_id: externalId.optional(),
		net_terms_days: netTermsDays.optional(),
		invoice_grace_days: invoiceGraceDays.optional(),
		...paymentFields,
		...hierarchyFields,
	})
	.openapi("UpdateAccount");

const AccountParams = z.object({ account_id: z.string() });
const AccountsQuery = PageQuery.extend({
	parent_account_id: z
		.string()
		.min(1)
		.optional()
		.openapi({ description: "Only the children of this account." }),
});

export const accountRoutes = apiRouter();

accountRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/accounts",
		operationId: "listAccounts",
		tags: ["Accounts"],
		summary: "List customer accounts",
		request: { query: AccountsQuery },
		responses: {
			200: { description: "Accounts", ...json(pageSchema("accounts", Account)) },
			...errorResponses(400),
		},
	}),
	async (c) => {
		const query = c.req.valid("query");
		const { items, total } = await listAccounts({ ...scopeOf(c), ...query });
		return c.json(pageOf("accounts", items, total, query), 200);
	},
);

accountRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "post",
		path: "/accounts",
		operationId: "createAccount",
		tags: ["Accounts"],
		summary: "Create a customer account",
		request: { body: { required: true, ...json(CreateAccount) } },
		responses: {
			201: { description: "The account", ...json(Account) },
			...errorResponses(...bodyErrors, 502),
		},
	}),
	async (c) => c.json(await createAccount({ ...scopeOf(c), env: c.env, input: c.req.valid("json") }), 201),
);

accountRoutes.openapi(
	createRoute({
		access: READ,
		method: "get",
		path: "/accounts/{account_id}",
		operationId: "getAccount",
		tags: ["Accounts"],
		summary: "Get an account",
		request: { params: AccountParams },
		responses: { 200: { description: "The account", ...json(Account) }, ...errorResponses(404) },
	}),
	async (c) =>
		c.json(
			await getAccount({
				...scopeOf(c),
				id: c.req.valid("param").account_id,
			}),
			200,
		),
);

accountRoutes.openapi(
	createRoute({
		access: WRITE,
		method: "patch",
		path: "/accounts/{account_id}",
		operationId: "updateAccount",
		tags: ["Accounts"],
		summary: "Update an account (its currency is fixed)",
		request: { params: AccountParams, body: { required: true, ...json(UpdateAccount) } },
		responses: {
			200: { description: "The account", ...json(Account) },
			...errorResponses(...bodyErrors, 404, 502),
		},
	}),
	async (c) => {
		const account = await updateAccount({
			...scopeOf(c),
			env: c.env,
			id: c.req.valid("param").account_id,
			input: c.req.valid("json"),
		});
		return c.json(account, 200);
	},
);
