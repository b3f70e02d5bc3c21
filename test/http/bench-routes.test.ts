import { createExecutionContext, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/app";
import type { Env } from "../../src/env";
import { expectError, get } from "../helpers";

/** The Worker's env with its rate limiter namespace watched: which object names a request asked for. */
function watchedEnv(vars: Partial<Env>) {
	const named: string[] = [];
	const namespace = env.RATE_LIMITER;
	const RATE_LIMITER = new Proxy(namespace, {
		get(target, property) {
			if (property === "idFromName") {
				return (name: string) => {
					named.push(name);
					return target.idFromName(name);
				};
			}
			const value = Reflect.get(target, property);
			return typeof value === "function" ? value.bind(target) : value;
		},
	});
	return { env: { ...env, ...vars, RATE_LIMITER } as Env, named };
}

async function hop(workerEnv: Env) {
	const ctx = createExecutionContext();
	const response = await createApp().fetch(new Request("https://billing.test/healthz/hop"), workerEnv, ctx);
	await waitOnExecutionContext(ctx);
	return { status: response.status, body: (await response.json()) as any };
}

describe("GET /healthz/hop (the bench's one-hop ceiling)", () => {
	it("is the 404 of an unknown path where BENCH_ROUTES is not set, and calls no object", async () => {
		expectError(await get("/healthz/hop", { key: null }), 404, "not_found");
		for (const vars of [{}, { BENCH_ROUTES: "0" }, { BENCH_ROUTES: "true" }]) {
			const watched = watchedEnv(vars);
			const response = await hop(watched.env);
			expect(response.status).toBe(404);
			expect(response.body.error.code).toBe("not_found");
			expect(watched.named).toEqual([]);
		}
	});

	it("answers after one call to a rate limiter of its own where BENCH_ROUTES is 1", async () => {
		const watched = watchedEnv({ BENCH_ROUTES: "1" });
		for (let i = 0; i < 3; i++) {
			expect(await hop(watched.env)).toEqual({ status: 200, body: { status: "ok" } });
		}
		expect(watched.named).toEqual(["bench:hop", "bench:hop", "bench:hop"]);
	});
});
