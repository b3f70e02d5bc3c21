/** Settings → API keys: list, create (the secret is shown once), revoke after a confirmation. Admin keys only. */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, formValues, h } from "../dom";
import { displayPrefix } from "../session";
import type { ApiKey, List } from "../types";
import { confirmAction, errorBox, field, pager, runInto, secretOnce, section, table, when } from "../ui";

const PAGE = 20;

export async function apiKeysPage(ctx: PageContext): Promise<void> {
	const listSlot = h("div", { class: "key-list" });
	const secretSlot = h("div", { "aria-live": "polite" });
	const showList = async () => {
		const offset = pageOffset(ctx.query);
		const keys = await ctx.api.get<List<"api_keys", ApiKey>>(
			"/api-keys",
			{ limit: PAGE, offset },
			ctx.signal,
		);
		fill(listSlot, keyTable(ctx, keys, showList));
	};
	await showList();
	fill(
		ctx.view,
		h("h1", null, "Settings → API keys"),
		h(
			"p",
			{ class: "muted" },
			"API keys (sk_api_…) call this API with a permission; SDK keys (sk_live_… / sk_test_…) only send events and read usage. Keys answer 401 as soon as they are revoked.",
		),
		secretSlot,
		section("Create a key", createForm(ctx, secretSlot, showList)),
		section("Keys", listSlot),
	);
}

function createForm(ctx: PageContext, secretSlot: HTMLElement, showList: () => Promise<void>): HTMLElement {
	const result = h("div");
	const permission = h(
		"select",
		{ name: "permission" },
		["read-only", "read-write", "admin"].map((p) => h("option", { value: p }, p)),
	);
	const type = h(
		"select",
		{
			name: "type",
			onchange: () => {
				permission.disabled = type.value === "sdk";
			},
		},
		h("option", { value: "api" }, "API key"),
		h("option", { value: "sdk" }, "SDK key"),
	);
	const environment = ctx.identity.environment ?? "live";
	const button = h("button", { type: "submit", class: "primary" }, "Create key");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Create a key" },
		field("Type", type),
		field("Permission", permission),
		field(
			"Environment",
			h(
				"select",
				{ name: "environment" },
				["live", "test"].map((env) => h("option", { value: env, selected: env === environment }, env)),
			),
		),
		field("Name", h("input", { name: "name", maxlength: 200, placeholder: "e.g. billing dashboard" })),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		const body: Record<string, string> = {
			type: values.type ?? "api",
			environment: values.environment ?? "live",
		};
		if (body.type === "api") body.permission = values.permission ?? "read-only";
		if (values.name) body.name = values.name;
		void runInto(result, button, async () => {
			const created = await ctx.api.post<ApiKey & { key: string }>("/api-keys", body);
			const elsewhere =
				ctx.identity.environment !== null &&
				created.environment !== ctx.identity.environment &&
				h(
					"p",
					{ class: "muted" },
					`It belongs to the ${created.environment} environment, so it is not listed here: this list shows the ${ctx.identity.environment} environment's keys.`,
				);
			fill(
				secretSlot,
				secretOnce(
					`New ${created.environment} ${created.permission ?? "SDK"} key ${created.name ?? created.prefix}`,
					created.key,
					() => fill(secretSlot),
					elsewhere,
				),
			);
			form.reset();
			permission.disabled = false;
			await showList();
			return null;
		});
	});
	return h("div", null, form, result);
}

function keyTable(
	ctx: PageContext,
	keys: List<"api_keys", ApiKey>,
	showList: () => Promise<void>,
): HTMLElement {
	const ownPrefix = displayPrefix(ctx.identity.key);
	const problem = h("div");
	const revoke = async (key: ApiKey, button: HTMLButtonElement) => {
		const own = key.prefix === ownPrefix;
		const sure = await confirmAction(
			`Revoke ${key.name ?? key.prefix} (${key.environment}, ${key.permission ?? "SDK"})? It stops working at once and cannot be restored.${own ? " This is the key you are signed in with: you will be signed out." : ""}`,
			"Revoke",
			ctx.signal,
		);
		if (!sure) return;
		await runInto(problem, button, async () => {
			await ctx.api.delete(`/api-keys/${key.id}`);
			if (own) location.reload();
			else await showList();
			return null;
		});
	};
	return h(
		"div",
		null,
		problem,
		table(
			["name", "type", "environment", "permission", "key", "created", "last used", "actions"],
			keys.api_keys.map((key) => {
				const button = h("button", { type: "button", class: "danger small" }, "Revoke");
				button.addEventListener(
					"click",
					() => void revoke(key, button).catch((e) => fill(problem, errorBox(e))),
				);
				return [
					key.name ?? h("span", { class: "muted" }, "unnamed"),
					key.type,
					key.environment,
					key.permission ?? "—",
					h("code", { "data-key-id": key.id }, key.prefix),
					when(key.created_at),
					when(key.last_used_at),
					button,
				];
			}),
			"No stored keys in this environment (the operator key, ADMIN_API_KEY, is not listed).",
		),
		pager(keys, (next) => ctx.go(hashOf("/settings/api-keys", { offset: next }))),
	);
}
