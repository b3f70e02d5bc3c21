/** One webhook endpoint: send a test event and see the answer, its delivery log, and retry a delivery. */
import { hashOf, type PageContext, pageOffset } from "../context";
import { fill, h } from "../dom";
import { dateTime } from "../format";
import {
	type List,
	type TestResult,
	WEBHOOK_EVENTS,
	type WebhookDelivery,
	type WebhookEndpoint,
} from "../types";
import { badge, field, link, pager, runInto, section, table, when } from "../ui";
import { deleteEndpoint, setStatus } from "./webhooks";

const PAGE = 20;

export async function webhookPage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const endpoint = await ctx.api.get<WebhookEndpoint>(`/webhooks/${id}`, undefined, ctx.signal);
	const logSlot = h("div");
	const showLog = async () => {
		const deliveries = await ctx.api.get<List<"deliveries", WebhookDelivery>>(
			`/webhooks/${id}/deliveries`,
			{ limit: PAGE, offset: pageOffset(ctx.query) },
			ctx.signal,
		);
		fill(logSlot, deliveryTable(ctx, endpoint, deliveries, showLog));
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
		section("Delivery log", refresh, logSlot),
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
): HTMLElement {
	const problem = h("div");
	const rows = deliveries.deliveries.map((delivery) => {
		const retry = h("button", { type: "button", class: "small" }, "Retry now");
		retry.addEventListener("click", () =>
			runInto(problem, retry, async () => {
				await ctx.api.post(`/webhooks/${endpoint.id}/deliveries/${delivery.id}/retry`);
				await showLog();
				return null;
			}),
		);
		return [
			h("div", null, delivery.event, h("div", null, h("small", null, h("code", null, delivery.id)))),
			badge(delivery.status),
			String(delivery.attempts),
			delivery.last_status_code === null ? "—" : String(delivery.last_status_code),
			delivery.last_error ?? "—",
			when(delivery.created_at),
			delivery.status === "pending" ? when(delivery.next_attempt_at) : when(delivery.delivered_at),
			retry,
		];
	});
	return h(
		"div",
		null,
		problem,
		table(
			["event", "status", "attempts", "last answer", "last error", "created", "next / delivered", ""],
			rows,
			"No deliveries yet.",
		),
		pager(deliveries, (next) => ctx.go(hashOf(`/settings/webhooks/${endpoint.id}`, { offset: next }))),
	);
}
