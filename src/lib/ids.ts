// Ids are a type prefix plus 26 Crockford base32 characters: 10 of creation time in ms, then 16 random.
// Within one isolate they are strictly increasing, so sorting by id is sorting by creation.
const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

export type IdPrefix =
	| "agt"
	| "acct"
	| "sub"
	| "plan"
	| "inv"
	| "act"
	| "out"
	| "cost"
	| "whk"
	| "dlv"
	| "evt"
	| "key"
	| "pay"
	| "req";

let lastTime = 0;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
	let out = "";
	let rest = ms;
	for (let i = 0; i < 10; i++) {
		out = ALPHABET[rest % 32] + out;
		rest = Math.floor(rest / 32);
	}
	return out;
}

function nextRandom(now: number): number[] {
	if (now === lastTime && lastRandom.length > 0) {
		const next = [...lastRandom];
		for (let i = next.length - 1; i >= 0; i--) {
			if ((next[i] as number) < 31) {
				next[i] = (next[i] as number) + 1;
				return next;
			}
			next[i] = 0;
		}
	}
	const bytes = crypto.getRandomValues(new Uint8Array(16));
	// Leave headroom in the first digit so increments within one millisecond never overflow.
	return Array.from(bytes, (b, i) => (i === 0 ? b % 16 : b % 32));
}

export function newId(prefix: IdPrefix): string {
	const now = Math.max(Date.now(), lastTime);
	lastRandom = nextRandom(now);
	lastTime = now;
	return `${prefix}_${encodeTime(now)}${lastRandom.map((d) => ALPHABET[d]).join("")}`;
}
