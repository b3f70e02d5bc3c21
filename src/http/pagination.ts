import { z } from "@hono/zod-openapi";

export const pageQuery = {
	limit: z.coerce
		.number()
		.int()
		.min(1)
		.max(100)
		.default(20)
		.openapi({ description: "Page size, 1–100.", example: 20 }),
	offset: z.coerce.number().int().min(0).default(0).openapi({ description: "Items to skip.", example: 0 }),
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
