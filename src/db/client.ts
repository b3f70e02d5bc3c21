import { drizzle } from "drizzle-orm/d1";
import * as schema from "./schema";

export type Db = ReturnType<typeof database>;

export function database(d1: D1Database) {
	return drizzle(d1, { schema });
}

export function isUniqueViolation(error: unknown): boolean {
	const text = String((error as { cause?: unknown })?.cause ?? error) + String(error);
	return /UNIQUE constraint failed/i.test(text);
}
