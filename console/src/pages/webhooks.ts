/** Settings → Webhooks: endpoints (create with the secret shown once, enable/disable, delete). Admin keys only. */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, h } from "../dom";
import { type List, WEBHOOK_EVENTS, type WebhookEndpoint } from "../types";
import {
	badge,
	confirmAction,
	errorBox,
	field,
	link,
	pager,
	runInto,
	secretOnce,
	section,
	table,
	when,
} from "../ui";

const PAGE = 20;

export async function webhooksPage(ctx: PageContext): Promise<void> {
	const listSlot = h("div");
	const secretSlot = h("div", { "aria-live": "polite" });
	const showList = async () => {
		const endpoints = await ctx.api.get<List<"webhooks", WebhookEndpoint>>(
			"/webhooks",
			{ limit: PAGE, offset: pageOffset(ctx.query) },
			ctx.signal,
		);
		fill(listSlot, endpointTable(ctx, endpoints, showList));
	};
	await showList();
	fill(
		ctx.view,
		h("h1", null, "Settings → Webhooks"),
		h(
			"p",
			{ class: "muted" },
			`Endpoints of the ${ctx.identity.environment ?? "current"} environment receive its events, signed with their secret (X-Webhook-Signature and the Standard Webhooks headers). Failed deliveries are retried after 1 min, 5 min, 15 min, 1 h, 6 h and 24 h.`,
		),
		secretSlot,
		section("Add an endpoint", createForm(ctx, secretSlot, showList)),
		section("Endpoints", listSlot),
	);
}

export function setStatus(ctx: PageContext, endpoint: WebhookEndpoint, status: "enabled" | "disabled") {
	return ctx.api.patch<WebhookEndpoint>(`/webhooks/${endpoint.id}`, { status });
}

export async function deleteEndpoint(ctx: PageContext, endpoint: WebhookEndpoint): Promise<boolean> {
	const sure = await confirmAction(
		`Delete the endpoint ${endpoint.url} and its delivery log? It receives nothing more.`,
		"Delete",
		ctx.signal,
	);
	if (sure) await ctx.api.delete(`/webhooks/${endpoint.id}`);
	return sure;
}

function createForm(ctx: PageContext, secretSlot: HTMLElement, showList: () => Promise<void>): HTMLElement {
	const result = h("div");
	const button = h("button", { type: "submit", class: "primary" }, "Add endpoint");
	const url = h("input", {
		name: "url",
		type: "url",
		required: true,
		placeholder: "https://example.com/hooks/billing",
		size: 40,
	});
	const description = h("input", { name: "description", maxlength: 500, placeholder: "optional" });
	const boxes = WEBHOOK_EVENTS.map((kind) => h("input", { type: "checkbox", name: "events", value: kind }));
	const form = h(
		"form",
		{ class: "webhook-form", "aria-label": "Add an endpoint", novalidate: true },
		field("URL", url, "https://…, or http:// to localhost, 127.0.0.1 or [::1] for local development."),
		h(
			"fieldset",
			null,
			h("legend", null, "Events"),
			boxes.map((box) => h("label", { class: "check" }, box, ` ${box.value}`)),
		),
		field("Description", description),
		button,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const events = boxes.filter((box) => box.checked).map((box) => box.value);
		const body: Record<string, unknown> = { url: url.value.trim(), events };
		if (description.value.trim()) body.description = description.value.trim();
		void runInto(result, button, async () => {
			const created = await ctx.api.post<WebhookEndpoint & { secret: string }>("/webhooks", body);
			fill(
				secretSlot,
				secretOnce(`Signing secret of ${created.url}`, created.secret, () => fill(secretSlot)),
			);
			form.reset();
			await showList();
			return h(
				"p",
				{ class: "ok" },
				"Added. ",
				link(`#/settings/webhooks/${created.id}`, "Send it a test event →"),
			);
		});
	});
	return h("div", null, form, result);
}

function endpointTable(
	ctx: PageContext,
	endpoints: List<"webhooks", WebhookEndpoint>,
	showList: () => Promise<void>,
): HTMLElement {
	const problem = h("div");
	const rows = endpoints.webhooks.map((endpoint) => {
		const next = endpoint.status === "enabled" ? "disabled" : "enabled";
		const toggle = h(
			"button",
			{ type: "button", class: "small" },
			next === "disabled" ? "Disable" : "Enable",
		);
		toggle.addEventListener("click", () =>
			runInto(problem, toggle, async () => {
				await setStatus(ctx, endpoint, next);
				await showList();
				return null;
			}),
		);
		const remove = h("button", { type: "button", class: "danger small" }, "Delete");
		remove.addEventListener("click", () =>
			runInto(problem, remove, async () => {
				if (await deleteEndpoint(ctx, endpoint)) await showList();
				return null;
			}).catch((e) => fill(problem, errorBox(e))),
		);
		return [
			link(`#/settings/webhooks/${endpoint.id}`, endpoint.url),
			endpoint.events.join(", "),
			badge(endpoint.status),
			when(endpoint.created_at),
			h(
				"span",
				{ class: "row-actions" },
				link(`#/settings/webhooks/${endpoint.id}`, "Test & deliveries"),
				toggle,
				remove,
			),
		];
	});
	return h(
		"div",
		null,
		problem,
		table(["url", "events", "status", "created", "actions"], rows, "No endpoints yet."),
		pager(endpoints, (next) => ctx.go(hashOf("/settings/webhooks", { offset: next }))),
	);
}
