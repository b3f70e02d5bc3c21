/**
 * How the lines of a period's invoices are matched with each other: by metric, and on a period split by plan
 * changes "now" (split-rating.ts) by metric and part, so that a supplementary or threshold invoice bills what each
 * part lacks. Metrics never contain "@".
 */

/** What a line is compared by with earlier invoices of the period: its metric, and its part if the period split. */
export const lineKey = (line: { metric: string; part?: string | null }) =>
	line.part ? `${line.metric}@${line.part}` : line.metric;

/** The metric and part a key names. */
export const keyParts = (key: string): { metric: string; part?: string } => {
	const at = key.indexOf("@");
	return at < 0 ? { metric: key } : { metric: key.slice(0, at), part: key.slice(at + 1) };
};

/** The part a computed line carries over to the line it makes. */
export const partOf = (line: { part?: string }) =>
	line.part === undefined ? {} : { partStartsAt: line.part };
