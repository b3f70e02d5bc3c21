import { and, eq, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { Environment } from "../env";

/** The tenant partition every query runs in. Domain verbs take one; `where` makes its filter the default. */
export interface Scope {
	readonly environment: Environment;
}

export function inScope(
	scope: Scope,
	table: { environment: SQLiteColumn },
	...conditions: (SQL | undefined)[]
): SQL {
	return and(eq(table.environment, scope.environment), ...conditions) as SQL;
}
