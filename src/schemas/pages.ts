import { z } from "@hono/zod-openapi";
import { integerQuery } from "./query";

export const pageQuery = {
	limit: integerQuery({ min: 1, max: 100 })
		.default(20)
		.openapi({ type: "integer", minimum: 1, maximum: 100, description: "Page size, 1–100.", example: 20 }),
	offset: integerQuery({ min: 0 })
		.default(0)
		.openapi({ type: "integer", minimum: 0, description: "Items to skip.", example: 0 }),
};

export const PageQuery = z.strictObject(pageQuery);

export function pageOf<const K extends string, T>(
	plural: K,
	items: T[],
	total: number,
	query: { limit: number; offset: number },
): { [P in K]: T[] } & { total: number; limit: number; offset: number } {
	return { [plural]: items, total, limit: query.limit, offset: query.offset } as { [P in K]: T[] } & {
		total: number;
		limit: number;
		offset: number;
	};
}

/** The response shape of a list: `{ <plural>: [...], total, limit, offset }`. */
export function pageSchema<const K extends string, S extends z.ZodType>(plural: K, item: S) {
	return z.object({
		[plural]: z.array(item),
		total: z.number().int(),
		limit: z.number().int(),
		offset: z.number().int(),
	} as { [P in K]: z.ZodArray<S> } & { total: z.ZodNumber; limit: z.ZodNumber; offset: z.ZodNumber });
}
