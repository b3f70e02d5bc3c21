/**
 * Webhook delivery bodies checked against the payload schemas the OpenAPI document publishes for their kind, so
 * that what receivers get and what they were told cannot drift apart. The schemas are read from the served
 * document (/v1/openapi.json) and checked with @cfworker/json-schema, which interprets them instead of compiling
 * code (workerd forbids code generation). A body is also refused when it carries a property its schema does not
 * declare: the published schemas are open objects, which would let an undocumented field through.
 *
 * test/setup.ts runs this over every event the outbox of a test file holds when the file ends; events that tests
 * make up to exercise delivery itself (test/webhooks/fixtures.ts emitEvent) are registered as made up and skipped.
 */

import { env, exports } from "cloudflare:workers";
import { type Schema, Validator } from "@cfworker/json-schema";
import { envelopeBody } from "../../src/webhooks/send";

/** Ids of outbox events whose data a test made up (not produced by an operation of the service). */
export const madeUpEvents = new Set<string>();

type Json = any;

interface KindCheck {
	validator: Validator;
	envelope: Json;
	data: Json;
}

function resolve(document: Json, schema: Json): Json {
	const ref: string | undefined = schema?.$ref;
	if (ref === undefined) return schema;
	const path = ref.replace(/^#\//, "").split("/");
	return resolve(
		document,
		path.reduce((node, part) => node?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], document),
	);
}

function undeclared(body: Json, schema: Json, where: string): string[] {
	if (body === null || typeof body !== "object" || Array.isArray(body)) return [];
	const declared = new Set(Object.keys(schema?.properties ?? {}));
	return Object.keys(body)
		.filter((key) => !declared.has(key))
		.map((key) => `${where}/${key}: not declared by the published schema`);
}

/** The payload schemas of the served document, one check per event kind. */
export async function webhookPayloadChecker(): Promise<(body: unknown) => string[]> {
	const response = await exports.default.fetch(new Request("https://billing.test/v1/openapi.json"));
	if (response.status !== 200) throw new Error(`/v1/openapi.json answered ${response.status}`);
	const document = (await response.json()) as Json;
	const checks = new Map<string, KindCheck>();
	for (const [kind, item] of Object.entries(document.webhooks ?? {}) as [string, Json][]) {
		const envelope = item.post.requestBody.content["application/json"].schema;
		// The envelope's $refs point into the document's components: give the validator both, a copy of each.
		const root = structuredClone({ ...envelope, components: document.components }) as Schema;
		checks.set(kind, {
			validator: new Validator(root, "2020-12", false),
			envelope,
			data: resolve(document, envelope.properties?.data),
		});
	}
	return (body: unknown) => {
		const kind = (body as Json)?.event;
		const check = checks.get(kind);
		if (!check) return [`event ${JSON.stringify(kind)}: the document publishes no payload for it`];
		const result = check.validator.validate(body);
		return [
			...result.errors
				// The leaves: what is wrong, not every enclosing schema that failed because of it.
				.filter((error) => !["properties", "$ref", "allOf", "anyOf"].includes(error.keyword))
				.map((error) => `${error.instanceLocation}: ${error.error}`),
			...undeclared(body, check.envelope, "#"),
			...undeclared((body as Json).data, check.data, "#/data"),
		];
	};
}

/** The body each stored event is delivered with, as the sender builds it. */
export async function storedDeliveryBodies(): Promise<{ id: string; body: string }[]> {
	const { results } = await env.DB.prepare(
		"SELECT id, event, created_at, data, test FROM webhook_events ORDER BY created_at, id",
	).all<{ id: string; event: string; created_at: string; data: string; test: number }>();
	return results.map((row) => ({
		id: row.id,
		body: envelopeBody({
			id: row.id,
			event: row.event,
			createdAt: row.created_at,
			data: JSON.parse(row.data),
			test: row.test === 1,
		}),
	}));
}

/** Every problem of every delivery body of the events stored so far, but those made up by tests. */
export async function storedPayloadProblems(): Promise<string[]> {
	const bodies = (await storedDeliveryBodies()).filter(({ id }) => !madeUpEvents.has(id));
	if (bodies.length === 0) return [];
	const check = await webhookPayloadChecker();
	return bodies.flatMap(({ body }) => {
		const problems = check(JSON.parse(body));
		return problems.length === 0 ? [] : [`${body}\n  ${problems.join("\n  ")}`];
	});
}
