/**
 * One-off lines of a draft invoice (docs/credit-notes.md#draft-invoices): a charge or a deduction added by hand,
 * billed once. Their metric cannot be a plan's (plan metrics are [a-z0-9_]), so updates of the draft keep them
 * apart from the metered lines, and later supplementary invoices neither repeat nor reverse them.
 */
import { auditInsert } from "../audit/record";
import { abortUnlessChanged, isAbortedByGuard, statement } from "../db/batch";
import type { ById } from "../db/rows";
import { markStatements, type WriteMark } from "../db/write-once";
import { Decimal } from "../lib/decimal";
import { conflict, contention, validationError } from "../lib/errors";
import { minorUnits } from "../lib/money";
import { getInvoice, getInvoiceRow, type InvoiceView } from "./invoices";

export const ONE_OFF_METRIC = "one-off";

/** Rounds of a lost race (another line added at the same moment) before giving up. */
const RACE_ATTEMPTS = 20;

export async function addOneOffLine({
	db,
	scope,
	id,
	line,
	mark,
}: ById & { line: { description: string; amount: number }; mark?: WriteMark }): Promise<InvoiceView> {
	for (let attempt = 1; attempt <= RACE_ATTEMPTS; attempt++) {
		const row = await getInvoiceRow({ db, scope, id });
		if (row.status !== "draft") {
			throw conflict(`Invoice ${id} is ${row.status}; lines can be added to a draft invoice only.`);
		}
		const amount = Decimal.from(line.amount);
		const digits = minorUnits(row.currency);
		if (amount.scale > digits) {
			throw validationError(
				"amount",
				`${row.currency} has ${digits} decimal places; a line is rounded to them.`,
			);
		}
		const total = Decimal.from(row.amount).add(amount);
		if (total.isNegative()) {
			throw conflict(`The line would take invoice ${id} below zero (${total.toString()} ${row.currency}).`);
		}
		const d1 = db.$client;
		try {
			await d1.batch([
				statement(
					d1,
					"UPDATE invoices SET amount = ?3 WHERE environment = ?1 AND id = ?2 AND status = 'draft' AND amount = ?4",
					scope.environment,
					id,
					total.toString(),
					row.amount,
				),
				abortUnlessChanged(d1),
				statement(
					d1,
					`INSERT INTO invoice_lines (invoice_id, position, environment, metric, description, quantity, amount,
						agent_shares)
					VALUES (?1, (SELECT COALESCE(MAX(position), -1) + 1 FROM invoice_lines WHERE invoice_id = ?1), ?2, ?3, ?4,
						'1', ?5, NULL)`,
					id,
					scope.environment,
					ONE_OFF_METRIC,
					line.description,
					amount.toString(),
				),
				auditInsert(d1, scope, {
					action: "invoice.updated",
					resourceId: id,
					changes: {
						amount: [Decimal.from(row.amount).toNumber(), total.toNumber()],
						line_added: [null, { description: line.description, amount: amount.toNumber() }],
					},
				}),
				...markStatements(mark, d1, [id]),
			]);
			return getInvoice({ db, scope, id });
		} catch (error) {
			if (!isAbortedByGuard(error)) throw error;
		}
	}
	throw contention(`draft invoice ${id}`);
}
