/**
 * The event explorer (CONTRACT §15): a subscription's or an instance's events, newest first, with their metadata
 * and whether they are billable, older pages by cursor, and a live tail that asks every few seconds for what came
 * in since (GET /v1/events). The tail stops when the page is left.
 */
import { hashOf, type PageContext } from "../context";
import { isDay } from "../dates";
import { fill, formValues, h } from "../dom";
import { quantity } from "../format";
import { nameOr, namesOf } from "../lookups";
import type { EventPage, List, MeteredEvent, Subscription } from "../types";
import { badge, errorBox, field, section, table, when } from "../ui";

const PAGE = 50;
const TAIL_EVERY_MS = 2_000;

export async function eventsPage(ctx: PageContext): Promise<void> {
	const q = (name: string) => ctx.query.get(name) ?? "";
	const filters = {
		subscription_id: q("subscription_id"),
		agent_key: q("agent_key"),
		kind: ["action", "outcome"].includes(q("kind")) ? q("kind") : "",
		type: q("type"),
		start_date: isDay(q("start_date")) ? q("start_date") : "",
		end_date: isDay(q("end_date")) ? q("end_date") : "",
	};
	const [subscriptions, accounts] = await Promise.all([
		ctx.api.get<List<"subscriptions", Subscription>>("/subscriptions", { limit: 100 }, ctx.signal),
		namesOf(ctx.api, "/accounts", "accounts", ctx.signal),
	]);
	const form = h(
		"form",
		{ class: "filters", "aria-label": "Which events" },
		field(
			"Subscription",
			h(
				"select",
				{ name: "subscription_id" },
				h("option", { value: "" }, "— or an instance —"),
				subscriptions.subscriptions.map((s) =>
					h(
						"option",
						{ value: s.id, selected: s.id === filters.subscription_id },
						`${nameOr(accounts, s.account_id)} · ${s.agent_instance_ids.join(", ")} (${s.status})`,
					),
				),
			),
		),
		field(
			"Instance key",
			h("input", { name: "agent_key", value: filters.agent_key, placeholder: "lead-qualifier-eu-1" }),
		),
		field(
			"Kind",
			h(
				"select",
				{ name: "kind" },
				["", "action", "outcome"].map((k) =>
					h("option", { value: k, selected: k === filters.kind }, k || "any"),
				),
			),
		),
		field("Type", h("input", { name: "type", value: filters.type, placeholder: "llm_call", size: 12 })),
		field("From", h("input", { type: "date", name: "start_date", value: filters.start_date })),
		field("To", h("input", { type: "date", name: "end_date", value: filters.end_date })),
		h("button", { type: "submit", class: "primary" }, "Show events"),
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		ctx.go(hashOf("/events", formValues(form)));
	});
	const listSlot = h("div");
	fill(
		ctx.view,
		h("h1", null, "Events"),
		h(
			"p",
			{ class: "muted" },
			"What agents sent, newest first: one subscription's events, or one instance's. An event outside every subscription is recorded but not billable.",
		),
		form,
		section("Events", listSlot),
	);
	if (!filters.subscription_id && !filters.agent_key) {
		fill(listSlot, h("p", { class: "muted empty" }, "Choose a subscription or type an instance key."));
		return;
	}
	// The API takes one of the two: a chosen subscription wins over a typed instance key.
	const query = { ...filters, agent_key: filters.subscription_id ? "" : filters.agent_key };
	const first = await ctx.api
		.get<EventPage>("/events", { ...query, limit: PAGE }, ctx.signal)
		.catch((error) => {
			if (!ctx.signal.aborted) fill(listSlot, errorBox(error));
			return null;
		});
	if (!first) return;
	showEvents(ctx, listSlot, query, first);
}

function eventRow(event: MeteredEvent): HTMLElement[] {
	return [
		when(event.timestamp),
		h("span", null, event.kind, " ", h("code", null, event.type)),
		h("code", null, event.agent_key),
		event.value === null ? "—" : h("span", { class: "num" }, quantity(event.value)),
		event.billable ? badge("billable") : badge("unbilled"),
		event.metadata && Object.keys(event.metadata).length > 0
			? h("code", { class: "metadata" }, JSON.stringify(event.metadata))
			: "—",
		h("code", { class: "event-id" }, event.id),
	].map((cell) => (typeof cell === "string" ? h("span", null, cell) : cell));
}

const HEADERS = ["time (UTC)", "event", "instance", "value", "billable", "metadata", "id"];

function showEvents(
	ctx: PageContext,
	slot: HTMLElement,
	query: Record<string, string>,
	first: EventPage,
): void {
	const seen = new Set(first.events.map((e) => e.id));
	const rows: MeteredEvent[] = [...first.events];
	let cursor = first.next_cursor;
	const tableSlot = h("div", { "data-events": "" });
	const status = h("p", { class: "muted tail-status", role: "status" });
	const draw = () => fill(tableSlot, table(HEADERS, rows.map(eventRow), "No events match."));
	draw();

	const older = h("button", { type: "button", disabled: cursor === null }, "Older events");
	older.addEventListener("click", async () => {
		if (!cursor) return;
		older.disabled = true;
		try {
			const next = await ctx.api.get<EventPage>("/events", { ...query, limit: PAGE, cursor }, ctx.signal);
			for (const event of next.events) {
				if (seen.has(event.id)) continue;
				seen.add(event.id);
				rows.push(event);
			}
			cursor = next.next_cursor;
			draw();
		} catch (error) {
			fill(status, errorBox(error));
		} finally {
			older.disabled = cursor === null;
		}
	});

	// The live tail: the newest page again every few seconds; what is new goes on top.
	let timer: ReturnType<typeof setTimeout> | null = null;
	const tail = h("input", { type: "checkbox", name: "live_tail" });
	const poll = async () => {
		try {
			const latest = await ctx.api.get<EventPage>("/events", { ...query, limit: PAGE }, ctx.signal);
			const fresh = latest.events.filter((e) => !seen.has(e.id));
			for (const event of fresh) seen.add(event.id);
			if (fresh.length > 0) {
				rows.unshift(...fresh);
				draw();
			}
			fill(status, `Live: checked ${new Date().toISOString().slice(11, 19)} UTC, ${fresh.length} new.`);
		} catch (error) {
			if (ctx.signal.aborted) return;
			fill(status, errorBox(error));
		}
		if (tail.checked && !ctx.signal.aborted) timer = setTimeout(poll, TAIL_EVERY_MS);
	};
	tail.addEventListener("change", () => {
		if (timer) clearTimeout(timer);
		timer = null;
		if (tail.checked) void poll();
		else fill(status, "Live tail off.");
	});
	ctx.signal.addEventListener("abort", () => {
		if (timer) clearTimeout(timer);
	});
	fill(
		slot,
		h("div", { class: "log-tools" }, h("label", { class: "check" }, tail, " Live tail (every 2 s)"), older),
		status,
		tableSlot,
	);
}
