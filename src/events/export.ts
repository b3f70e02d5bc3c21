/**
 * GET /v1/events/export?date= (docs/metering.md#the-archive-and-export): every archived event of a UTC day in the caller's environment, streamed as
 * NDJSON — the day's archive objects, decompressed one after another, never held whole in memory.
 */
import type { Scope } from "../db/scope";
import type { Env } from "../env";

export function archivedDayStream(env: Env, scope: Scope, day: string): ReadableStream<Uint8Array> {
	const prefix = `events/${scope.environment}/${day}/`;
	const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
	const pump = async () => {
		let cursor: string | undefined;
		try {
			do {
				const page = await env.EVENTS_ARCHIVE.list({ prefix, cursor });
				for (const listed of page.objects) {
					const object = await env.EVENTS_ARCHIVE.get(listed.key);
					if (object === null) continue;
					await object.body
						.pipeThrough(new DecompressionStream("gzip"))
						.pipeTo(writable, { preventClose: true });
				}
				cursor = page.truncated ? page.cursor : undefined;
			} while (cursor !== undefined);
			await writable.close();
		} catch (error) {
			await writable.abort(error);
		}
	};
	void pump();
	return readable;
}
