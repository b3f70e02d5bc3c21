/**
 * What every app of this Worker shares around its routes: the request id, the middlewares of /v1 in their order,
 * the answer to an unknown path and the error body. app.ts assembles the whole service with it, ingest-app.ts
 * the few routes a new isolate answers before it loads the rest (index.ts picks one per request).
 */
import type { Hono } from "hono";
import { HTTPException } from "hono/http-exception";
import { auditContext } from "./audit/gate";
import { ApiError, fromDomainError, statusOf } from "./http/api-error";
import { jsonBody } from "./http/body";
import { refuseUnexpectedBody } from "./http/bodyless";
import type { AppEnv } from "./http/context";
import { gate } from "./http/gate";
import { idempotency } from "./http/idempotency";
import { singleQueryValues } from "./http/query";
import { DomainError } from "./lib/errors";
import { newId } from "./lib/ids";
import { collectAfterInvoiceWrites } from "./payments/after-answer";
import { dispatchAfterOutboxWrites } from "./webhooks/after-answer";

export interface AppParts<R extends Hono<AppEnv>> {
	/** What is mounted before /v1's middlewares: routes without a key (health, the document, the docs page). */
	open(app: R): void;
	/** The routers mounted under /v1, behind the gate, the body checks and the idempotency middleware. */
	api: readonly Hono<AppEnv>[];
	/** What is mounted after /v1, with its own gate (the portal, MCP). */
	after?(app: R): void;
}

/**
 * Mounts the parts on `app`: an OpenAPIHono for the whole app (http/router.ts), whose routes make the document; a
 * plain Hono for the ingest app, which must not load zod before its first request needs it.
 */
export function assembleApp<R extends Hono<AppEnv>>(app: R, parts: AppParts<R>): R {
	app.use("*", async (c, next) => {
		const requestId = c.req.header("X-Request-Id")?.slice(0, 100) || newId("req");
		c.set("requestId", requestId);
		c.header("X-Request-Id", requestId);
		await next();
	});

	parts.open(app);

	app.use("/v1/*", async (c, next) => (c.req.path === "/v1/openapi.json" ? next() : gate(c, next)));
	app.use("/v1/*", async (c, next) => (c.req.path === "/v1/openapi.json" ? next() : auditContext(c, next)));
	app.use("/v1/*", singleQueryValues);
	app.use("/v1/*", jsonBody);
	app.use("/v1/*", refuseUnexpectedBody(app));
	app.use("/v1/*", idempotency);
	app.use("/v1/*", dispatchAfterOutboxWrites);
	app.use("/v1/*", collectAfterInvoiceWrites);

	for (const routes of parts.api) app.route("/v1", routes);

	parts.after?.(app);

	app.notFound((c) => {
		throw new ApiError("not_found", `No route ${c.req.method} ${c.req.path}.`);
	});

	app.onError((err, c) => {
		const requestId = c.get("requestId") ?? newId("req");
		let error: ApiError;
		if (err instanceof ApiError) error = err;
		else if (err instanceof DomainError) error = fromDomainError(err);
		else if (httpStatusOf(err) === 415) {
			error = new ApiError(
				"unsupported_media_type",
				"Send the body as JSON with 'Content-Type: application/json'.",
			);
		} else if (httpStatusOf(err) === 400) {
			// Hono's validator says 400 only when a required JSON body is missing: bad JSON was answered earlier.
			error = new ApiError("validation_error", "This operation needs a JSON body.", {
				details: [{ path: "body", message: "Required." }],
			});
		} else {
			console.error(JSON.stringify({ requestId, error: String(err), stack: (err as Error)?.stack }));
			error = new ApiError(
				"internal_error",
				"Something went wrong on our side. Retry, or quote the request id.",
			);
		}
		for (const [name, value] of Object.entries(error.headers ?? {})) c.header(name, value);
		c.header("X-Request-Id", requestId);
		return c.json(
			{
				error: {
					code: error.code,
					message: error.message,
					...(error.details ? { details: error.details } : {}),
					request_id: requestId,
				},
			},
			statusOf(error.code),
		);
	});

	return app;
}

/**
 * The status of Hono's HTTPException (a validator's 400, zod-openapi's 415), recognised as Hono itself does, by its
 * getResponse: a route module imported on first need may hold its own copy of the class (the Workers-runtime tests
 * load such modules apart), and `instanceof` would then miss it.
 */
function httpStatusOf(err: Error): number | undefined {
	if (err instanceof HTTPException) return err.status;
	return "getResponse" in err && "status" in err && typeof err.status === "number" ? err.status : undefined;
}
