import { z } from "@hono/zod-openapi";

/** A payment brings money in; a refund, made by a credit note with `refund: true`, gives some back. */
export const PaymentKind = z.enum(["payment", "refund"]).openapi({
	example: "payment",
	description: "payment: money received; refund: money given back by a credit note (a negative amount).",
});
