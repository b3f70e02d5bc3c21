// Apart from ids.ts, which every request uses: hashing loads the runtime's node:crypto, which a new isolate need not
// load before its first answer (docs/scaling.md#cold-start).
import { ALPHABET, encodeTime, type IdPrefix } from "./ids";
import { sha256Hex } from "./sha256";

/**
 * An id made from data instead of drawn at random: the same time and seed give the same id everywhere (every
 * environment, every deploy), for rows that ship with the service. Sorts by `timeMs` like a created id.
 */
export function derivedId(prefix: IdPrefix, timeMs: number, seed: string): string {
	const digest = sha256Hex(seed);
	let out = "";
	for (let i = 0; i < 16; i++) out += ALPHABET[Number.parseInt(digest.slice(i * 2, i * 2 + 2), 16) % 32];
	return `${prefix}_${encodeTime(timeMs)}${out}`;
}
