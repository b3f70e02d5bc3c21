/**
 * One rate plan (docs/plan-versions.md): its versions, each with the active subscriptions it rates, and moving
 * subscriptions of earlier versions to a later one from the next billing period on (migrate).
 */
import type { PageContext } from "../context";
import { fill, formValues, h } from "../dom";
import { money } from "../format";
import type { PlanMigration, RatePlan } from "../types";
import { field, fillWhenReady, link, runInto, section, table, when } from "../ui";

export async function ratePlanPage(ctx: PageContext): Promise<void> {
	const id = ctx.params[0] as string;
	const read = () => ctx.api.get<RatePlan>(`/pricing/rate-plans/${id}`, undefined, ctx.signal);
	const plan = await read();
	const slot = h("div", { "data-plan-versions": id });
	// Drawn from the plan already read; after a migrate, read again for the new counts.
	const show = (fresh = true) =>
		fillWhenReady(slot, ctx.signal, async () => versionTable(fresh ? await read() : plan));
	fill(
		ctx.view,
		h("h1", null, `Rate plan ${plan.name} `, h("small", { class: "muted" }, `v${plan.version}`)),
		h(
			"dl",
			{ class: "facts" },
			h("dt", null, "Id"),
			h("dd", null, h("code", null, plan.id)),
			h("dt", null, "Currency"),
			h("dd", null, plan.currency),
			h("dt", null, "Base fee (latest version)"),
			h("dd", null, money(plan.base_fee, plan.currency)),
		),
		section("Versions", slot),
		ctx.identity.permission === "read-only"
			? null
			: section("Migrate subscriptions", migrateForm(ctx, plan, show)),
	);
	await show(false);
}

function versionTable(plan: RatePlan): Node {
	const rows = [...plan.versions]
		.sort((a, b) => b.version - a.version)
		.map((v) => [
			h("span", null, `v${v.version}`, v.version === plan.version ? " (latest)" : ""),
			when(v.created_at),
			h("span", { class: "num", "data-version-subscriptions": String(v.version) }, String(v.subscriptions)),
		]);
	return table(["version", "created", "active subscriptions"], rows, "No versions.");
}

function migrateForm(ctx: PageContext, plan: RatePlan, show: () => Promise<void>): HTMLElement {
	const result = h("div", { "aria-live": "polite" });
	const button = h("button", { type: "submit", class: "primary" }, "Migrate");
	const form = h(
		"form",
		{ class: "inline-form", "aria-label": "Migrate subscriptions" },
		field(
			"From version (empty: every earlier one)",
			h("input", { name: "from_version", type: "number", min: "1", size: 4 }),
		),
		field(
			"To version (empty: latest)",
			h("input", { name: "to_version", type: "number", min: "1", size: 4 }),
		),
		button,
		result,
	);
	form.addEventListener("submit", (event) => {
		event.preventDefault();
		const values = formValues(form);
		void runInto(result, button, async () => {
			const body: Record<string, unknown> = { at: "period_end" };
			if (values.from_version) body.from_version = Number(values.from_version);
			if (values.to_version) body.to_version = Number(values.to_version);
			const moved = await ctx.api.post<PlanMigration>(`/pricing/rate-plans/${plan.id}/migrate`, body);
			await show();
			return h(
				"p",
				{ class: "ok", "data-migrated": String(moved.migrated) },
				`${moved.migrated} subscription${moved.migrated === 1 ? "" : "s"} moved from the next billing period on.`,
				moved.subscription_ids.length > 0 &&
					h(
						"span",
						null,
						" ",
						moved.subscription_ids.map((sub) => [link(`#/subscriptions/${sub}`, sub), " "]),
					),
			);
		});
	});
	return form;
}
