/** One webhook endpoint: send a test event and see the answer, its delivery log, and retry a delivery. */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, h } from "../dom";
import { dateTime } from "../format";
import {
	type List,
	type TestResult,
	WEBHOOK_EVENTS,
	type WebhookDelivery,
	type WebhookDeliveryWithPayload,
	type WebhookEndpoint,
} from "../types";
import { badge, field, link, pager, runInto, section, table, when } from "../ui";
import { deleteEndpoint, setStatus } from "./webhooks";

const PAGE = 20;
const STATUSES = ["pending", "succeeded", "failed"] as const;

/** Shows only deliveries in one state (GET …/deliveries?status=). */
function statusFilter(ctx: PageContext, endpoint: WebhookEndpoint, status: string): HTMLElement {
	const select = h(
		"select",
		{ name: "delivery_status" },
		h("option", { value: "", selected: status === "" }, "any"),
		STATUSES.map((s) => h("option", { value: s, selected: status === s }, s)),
	);
	select.addEventListener("change", () =>
		ctx.go(hashOf(`/settings/webhooks/${endpoint.id}`, { status: select.value })),
	);
	return h("div", { class: "log-filter" }, field("Status", select));
}

export async function webhookPage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const endpoint = await ctx.api.get<WebhookEndpoint>(`/webhooks/${id}`, undefined, ctx.signal);
	const logSlot = h("div");
	const status = STATUSES.find((s) => s === ctx.query.get("status")) ?? "";
	const showLog = async () => {
		const deliveries = await ctx.api.get<List<"deliveries", WebhookDelivery>>(
			`/webhooks/${id}/deliveries`,
			{ limit: PAGE, offset: pageOffset(ctx.query), status },
			ctx.signal,
		);
		fill(logSlot, deliveryTable(ctx, endpoint, deliveries, showLog, status));
	};
	await showLog();

	const problem = h("div");
	const toggle = h("button", { type: "button" }, endpoint.status === "enabled" ? "Disable" : "Enable");
	toggle.addEventListener("click", () =>
		runInto(problem, toggle, async () => {
			await setStatus(ctx, endpoint, endpoint.status === "enabled" ? "disabled" : "enabled");
			ctx.refresh();
			return null;
		}),
	);
	const remove = h("button", { type: "button", class: "danger" }, "Delete");
	remove.addEventListener("click", () =>
		runInto(problem, remove, async () => {
			if (await deleteEndpoint(ctx, endpoint)) ctx.go("#/settings/webhooks");
			return null;
		}),
	);
	const refresh = h("button", { type: "button", class: "small" }, "Refresh");
	refresh.addEventListener("click", () =>
		runInto(problem, refresh, async () => {
			await showLog();
			return null;
		}),
	);

	fill(
		ctx.view,
		h("p", { class: "crumbs" }, link("#/settings/webhooks", "Webhooks"), " / ", endpoint.id),
		h("h1", null, endpoint.url, " ", badge(endpoint.status)),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "Events"),
			h("dd", null, endpoint.events.join(", ")),
			h("dt", null, "Description"),
			h("dd", null, endpoint.description ?? "—"),
			h("dt", null, "Created"),
			h("dd", null, dateTime(endpoint.created_at)),
		),
		h("div", { class: "actions" }, toggle, remove),
		problem,
		section("Send a test event", testForm(ctx, endpoint, showLog)),
		section(
			"Delivery log",
			h("div", { class: "log-tools" }, statusFilter(ctx, endpoint, status), refresh),
			logSlot,
		),
	);
}

function testForm(ctx: PageContext, endpoint: WebhookEndpoint, showLog: () => Promise<void>): HTMLElement {
	const result = h("div", { class: "test-result", "aria-live": "polite" });
	const event = h(
		"select",
		{ name: "event" },
		WEBHOOK_EVENTS.map((kind) => h("option", { value: kind, selected: kind === endpoint.events[0] }, kind)),
	);
	const button = h("button", { type: "submit", class: "primary" }, "Send test");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Send a test event" },
		field("Event", event),
		button,
	);
	form.addEventListener("submit", (e) => {
		e.preventDefault();
		void runInto(result, button, async () => {
			const { result: sent } = await ctx.api.post<{ result: TestResult }>("/webhooks/test", {
				webhook_id: endpoint.id,
				event: event.value,
			});
			await showLog();
			return h(
				"p",
				{ class: sent.delivered ? "ok" : "error", "data-delivered": String(sent.delivered) },
				sent.delivered ? "Delivered" : "Not delivered",
				` — ${sent.status_code === null ? "no HTTP answer" : `HTTP ${sent.status_code}`} in ${sent.duration_ms} ms`,
				sent.error ? ` — ${sent.error}` : "",
				` (delivery ${sent.delivery_id}, sent once, not retried).`,
			);
		});
	});
	return h(
		"div",
		null,
		h(
			"p",
			{ class: "muted" },
			'A sample payload of the chosen kind, with "test": true in the body, sent now.',
		),
		form,
		result,
	);
}

function deliveryTable(
	ctx: PageContext,
	endpoint: WebhookEndpoint,
	deliveries: List<"deliveries", WebhookDelivery>,
	showLog: () => Promise<void>,
	status: string,
): HTMLElement {
	const problem = h("div");
	const rows = deliveries.deliveries.map((delivery) => {
		// A delivery that succeeded is done: sending it again is a test send's job, not a retry.
		let retry: HTMLButtonElement | null = null;
		if (delivery.status !== "succeeded") {
			const button = h(
				"button",
				{ type: "button", class: "small", "aria-label": `Retry delivery ${delivery.id} now` },
				"Retry now",
			);
			button.addEventListener("click", () =>
				runInto(problem, button, async () => {
					await ctx.api.post(`/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`);
					await showLog();
					return null;
				}),
			);
			retry = button;
		}
		return [
			h("div", null, delivery.event, h("div", null, h("small", null, h("code", null, delivery.id)))),
			badge(delivery.status),
			String(delivery.attempts),
			delivery.last_status_code === null ? "—" : String(delivery.last_status_code),
			delivery.last_error ?? "—",
			when(delivery.created_at),
			delivery.status === "pending" ? when(delivery.next_attempt_at) : when(delivery.delivered_at),
			h("div", { class: "row-actions" }, payloadView(ctx, endpoint, delivery), retry),
		];
	});
	return h(
		"div",
		null,
		problem,
		table(
			["event", "status", "attempts", "last answer", "last error", "created", "next / delivered", "actions"],
			rows,
			status ? `No ${status} deliveries.` : "No deliveries yet.",
		),
		pager(deliveries, (next) =>
			ctx.go(hashOf(`/settings/webhooks/${endpoint.id}`, { status, offset: next })),
		),
	);
}

/** The body the delivery's attempts send, fetched when it is opened (GET …/deliveries/{id}). */
function payloadView(ctx: PageContext, endpoint: WebhookEndpoint, delivery: WebhookDelivery): HTMLElement {
	const body = h("div", { class: "payload-body" });
	const details = h(
		"details",
		{ class: "payload", "data-delivery": delivery.id },
		h("summary", null, "Payload"),
		body,
	);
	let loaded = false;
	details.addEventListener("toggle", () => {
		if (!details.open || loaded) return;
		loaded = true;
		void runInto(body, null, async () => {
			const one = await ctx.api.get<WebhookDeliveryWithPayload>(
				`/webhooks/${endpoint.id}/deliveries/${delivery.id}`,
				undefined,
				ctx.signal,
			);
			return h("pre", { class: "json", tabindex: "0" }, JSON.stringify(one.payload, null, 2));
		});
	});
	return details;
}
