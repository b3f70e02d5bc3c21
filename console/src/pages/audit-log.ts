/**
 * The audit log (docs/audit-log.md): who changed what, newest first, filtered by resource, key, action and dates
 * (GET /v1/audit-log); older records by cursor. Admin keys only: the API answers 403 to the others.
 */
import { hashOf, type PageContext } from "../context";
import { isDay } from "../dates";
import { fill, formValues, h } from "../dom";
import type { AuditLogPage, AuditRecord } from "../types";
import { badge, errorBox, field, section, table, when } from "../ui";

const PAGE = 50;

/** The actor in brief: its type and key prefix (the key's id is in the record's details). */
function actorOf(record: AuditRecord): HTMLElement {
	const { type, key_prefix } = record.actor;
	return h("span", { class: "actor" }, badge(type), key_prefix ? [" ", h("code", null, key_prefix)] : null);
}

const shown = (value: unknown) => h("code", { class: "value" }, JSON.stringify(value));

/**
 * The fields a record changed, named in its summary; their values before → after, the key's id and the request's
 * on demand, so that a page of records stays a page of rows.
 */
function detailsOf(record: AuditRecord): HTMLElement {
	const entries = Object.entries(record.changes);
	const names =
		entries.length === 0
			? h("span", { class: "muted" }, "details")
			: entries.flatMap(([name], i) => [i > 0 ? ", " : null, h("code", null, name)]);
	return h(
		"details",
		{ class: "audit-details" },
		h("summary", null, names),
		entries.length > 0 &&
			h(
				"ul",
				{ class: "changes" },
				entries.map(([name, values]) =>
					h(
						"li",
						null,
						h("code", null, name),
						": ",
						values.length === 1 ? shown(values[0]) : [shown(values[0]), " → ", shown(values[1])],
					),
				),
			),
		h(
			"p",
			{ class: "muted audit-meta" },
			"request ",
			h("code", { class: "request-id" }, record.request_id ?? "—"),
			record.actor.key_id ? [" · key ", h("code", null, record.actor.key_id)] : null,
		),
	);
}

function recordRow(record: AuditRecord): HTMLElement[] {
	return [
		when(record.at),
		actorOf(record),
		h("code", null, record.action),
		h("code", null, record.resource_id),
		detailsOf(record),
	];
}

const HEADERS = ["time (UTC)", "actor", "action", "resource", "changes"];

export async function auditLogPage(ctx: PageContext): Promise<void> {
	const q = (name: string) => ctx.query.get(name) ?? "";
	const filters = {
		resource_id: q("resource_id"),
		key_id: q("key_id"),
		action: q("action"),
		start_date: isDay(q("start_date")) ? q("start_date") : "",
		end_date: isDay(q("end_date")) ? q("end_date") : "",
	};
	const form = h(
		"form",
		{ class: "filters", "aria-label": "Which records" },
		field(
			"Resource id",
			h("input", { name: "resource_id", value: filters.resource_id, placeholder: "acct_…" }),
		),
		field("Key id", h("input", { name: "key_id", value: filters.key_id, placeholder: "key_…" })),
		field(
			"Action",
			h("input", { name: "action", value: filters.action, placeholder: "invoice.voided", size: 16 }),
		),
		field("From", h("input", { type: "date", name: "start_date", value: filters.start_date })),
		field("To", h("input", { type: "date", name: "end_date", value: filters.end_date })),
		h("button", { type: "submit", class: "primary" }, "Show records"),
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		ctx.go(hashOf("/settings/audit-log", formValues(form)));
	});
	const listSlot = h("div", { "data-audit-log": "" });
	fill(
		ctx.view,
		h("h1", null, "Audit log"),
		h(
			"p",
			{ class: "muted" },
			"Every change made through the API or by the service itself, newest first: who made it, and each field's value before and after. Secrets never appear.",
		),
		form,
		section("Records", listSlot),
	);
	const rows: AuditRecord[] = [];
	let cursor: string | null = null;
	const tableSlot = h("div");
	const status = h("p", { class: "muted", role: "status" });
	const older = h("button", { type: "button", disabled: true }, "Older records");
	const draw = () => fill(tableSlot, table(HEADERS, rows.map(recordRow), "No records match."));
	const load = async () => {
		const next = await ctx.api.get<AuditLogPage>(
			"/audit-log",
			{ ...filters, limit: PAGE, ...(cursor ? { cursor } : {}) },
			ctx.signal,
		);
		rows.push(...next.records);
		cursor = next.next_cursor;
		older.disabled = cursor === null;
		draw();
	};
	older.addEventListener("click", async () => {
		older.disabled = true;
		try {
			await load();
		} catch (error) {
			if (!ctx.signal.aborted) fill(status, errorBox(error));
		}
	});
	try {
		await load();
	} catch (error) {
		if (!ctx.signal.aborted) fill(listSlot, errorBox(error));
		return;
	}
	fill(listSlot, tableSlot, status, h("div", { class: "log-tools" }, older));
}
