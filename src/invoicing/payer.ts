/**
 * Who pays an invoice (docs/account-hierarchies.md): `payer_account_id`, the parent's id when the account is
 * billed to its parent, else the account's own. Read beside the invoice's own columns, as collection-view.ts does.
 */
import { invoicePayers } from "../db/schema";

/** The payer column, to add to a `select` of invoices. */
export const payerColumns = { payerAccountId: invoicePayers.payerAccountId };

/** A row read without the payer column is paid by its own account. */
export type PayerRow = { payerAccountId?: string | null };
