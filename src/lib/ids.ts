// Ids are a type prefix plus 26 Crockford base32 characters: 10 of creation time in ms, then 16 random.
// Within one isolate they are strictly increasing, so sorting by id is sorting by creation.
export const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

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
	| "cgr"
	| "cle"
	| "req"
	| "alr"
	| "pss"
	| "mpr"
	| "rsv"
	| "cpn"
	| "dsc"
	| "cn"
	| "xr";

const RANDOM_DIGITS = 16;

// Ids are made by the thousand per batch of events: random bytes are drawn a pool at a time, and the text of
// the last id is kept in parts, so the next one in the same millisecond changes only its last character.
const pool = new Uint8Array(RANDOM_DIGITS * 64);
let poolUsed = pool.length;

let lastTime = -1;
let lastTimeText = "";
const lastRandom = new Uint8Array(RANDOM_DIGITS);
// The random part of the last id without its last digit.
let lastRandomHead = "";

export function encodeTime(ms: number): string {
	let out = "";
	let rest = ms;
	for (let i = 0; i < 10; i++) {
		out = ALPHABET[rest % 32] + out;
		rest = Math.floor(rest / 32);
	}
	return out;
}

function encodeHead(): string {
	let out = "";
	for (let i = 0; i < RANDOM_DIGITS - 1; i++) out += ALPHABET[lastRandom[i] as number];
	return out;
}

function freshRandom(): void {
	// getRandomValues may not run at module scope in Workers, so the pool is filled on first use.
	if (poolUsed === pool.length) {
		crypto.getRandomValues(pool);
		poolUsed = 0;
	}
	// Leave headroom in the first digit so increments within one millisecond never overflow.
	lastRandom[0] = (pool[poolUsed] as number) % 16;
	for (let i = 1; i < RANDOM_DIGITS; i++) lastRandom[i] = (pool[poolUsed + i] as number) % 32;
	poolUsed += RANDOM_DIGITS;
	lastRandomHead = encodeHead();
}

/** The last id's random part plus one; false if it has no room left. */
function increment(): boolean {
	for (let i = RANDOM_DIGITS - 1; i >= 0; i--) {
		if ((lastRandom[i] as number) < 31) {
			lastRandom[i] = (lastRandom[i] as number) + 1;
			if (i < RANDOM_DIGITS - 1) lastRandomHead = encodeHead();
			return true;
		}
		lastRandom[i] = 0;
	}
	return false;
}

export function newId(prefix: IdPrefix): string {
	const now = Date.now();
	if (now > lastTime) {
		lastTime = now;
		lastTimeText = encodeTime(now);
		freshRandom();
	} else if (!increment()) {
		freshRandom();
	}
	return `${prefix}_${lastTimeText}${lastRandomHead}${ALPHABET[lastRandom[RANDOM_DIGITS - 1] as number]}`;
}
