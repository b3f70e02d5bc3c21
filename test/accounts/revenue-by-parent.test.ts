import { describe, expect, it } from "vitest";
import { expectError, get } from "../helpers";
import { account, invoiceNow, period, subscribeFee } from "./fixtures";

// Revenue reports with group_by=parent_account (docs/account-hierarchies.md#revenue-by-parent-account).

describe("revenue by parent account", () => {
	it("a child's revenue counts under its parent, an account without a parent under itself", async () => {
		const parent = await account({ name: "Holding" });
		const payer = await account({ parent_account_id: parent.id, billing: "parent" });
		const sharer = await account({ parent_account_id: parent.id, use_parent_credits: true });
		const alone = await account({ name: "Alone" });
		await subscribeFee(parent.id, 10.1);
		await subscribeFee(payer.id, 20.2);
		await subscribeFee(sharer.id, 30.3);
		await subscribeFee(alone.id, 7);
		for (const id of [parent.id, payer.id, sharer.id, alone.id]) await invoiceNow(id);
		const range = `start_date=${period}-01&end_date=${period}-28`;
		const report = await get(`/v1/reports/revenue?${range}&group_by=parent_account`);
		expect(report.status, JSON.stringify(report.body)).toBe(200);
		expect(report.body.group_by).toBe("parent_account");
		const rows = report.body.breakdown as { id: string | null; name: string; revenue: number }[];
		expect(rows.find((row) => row.id === parent.id)).toEqual({
			id: parent.id,
			name: "Holding",
			revenue: 60.6,
		});
		expect(rows.find((row) => row.id === alone.id)).toEqual({ id: alone.id, name: "Alone", revenue: 7 });
		expect(rows.some((row) => row.id === payer.id || row.id === sharer.id)).toBe(false);
		// The rows add up to the report's revenue exactly (in cents, to compare without float error).
		const cents = rows.reduce((sum, row) => sum + Math.round(row.revenue * 100), 0);
		expect(cents).toBe(Math.round(report.body.revenue * 100));
		const byCustomer = await get(`/v1/reports/revenue?${range}&group_by=customer`);
		expect(byCustomer.body.revenue).toBe(report.body.revenue);
	});

	it("an unknown group_by is still refused", async () => {
		expectError(
			await get(`/v1/reports/revenue?start_date=${period}-01&end_date=${period}-28&group_by=parent`),
			400,
			"validation_error",
		);
	});
});
