/**
 * SHA-256 (FIPS 180-4) of a short text, synchronously, for the key lookup every authenticated request makes:
 * WebCrypto's digest costs a promise and a trip through the runtime's task queue (~90 µs per request in the
 * bench's profile), while hashing a key of under a hundred bytes here is one or two blocks of arithmetic.
 * Longer texts (request bodies) keep using WebCrypto: see lib/time.ts, sha256Hex.
 */

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Int32Array([
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
	0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
	0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
	0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
	0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
	0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
	0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
]);

// The first 32 bits of the fractional parts of the square roots of the first 8 primes.
const INITIAL = [
	0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const encoder = new TextEncoder();
// Reused between calls (the function is synchronous): the message schedule, as signed 32-bit words so that V8
// keeps every value a small integer (an unsigned word over 2^31 would be a heap number).
const w = new Int32Array(64);
const rotr = (x: number, n: number) => (x >>> n) | (x << (32 - n));

/** The lowercase hex SHA-256 of the UTF-8 bytes of `text`, as WebCrypto's digest gives it. */
export function sha256HexSync(text: string): string {
	const bytes = encoder.encode(text);
	// The message, a 1 bit, zeros, and its length in bits (64-bit big-endian), in whole 64-byte blocks.
	const blocks = Math.ceil((bytes.length + 9) / 64);
	const padded = new Uint8Array(blocks * 64);
	padded.set(bytes);
	padded[bytes.length] = 0x80;
	const bits = bytes.length * 8;
	const end = padded.length;
	const high = Math.floor(bits / 2 ** 32);
	for (let i = 0; i < 4; i++) {
		padded[end - 8 + i] = (high >>> (24 - 8 * i)) & 0xff;
		padded[end - 4 + i] = (bits >>> (24 - 8 * i)) & 0xff;
	}

	let h0 = INITIAL[0] as number;
	let h1 = INITIAL[1] as number;
	let h2 = INITIAL[2] as number;
	let h3 = INITIAL[3] as number;
	let h4 = INITIAL[4] as number;
	let h5 = INITIAL[5] as number;
	let h6 = INITIAL[6] as number;
	let h7 = INITIAL[7] as number;
	for (let offset = 0; offset < end; offset += 64) {
		for (let t = 0; t < 16; t++) {
			const i = offset + 4 * t;
			w[t] =
				((padded[i] as number) << 24) |
				((padded[i + 1] as number) << 16) |
				((padded[i + 2] as number) << 8) |
				(padded[i + 3] as number);
		}
		for (let t = 16; t < 64; t++) {
			const x = w[t - 15] as number;
			const y = w[t - 2] as number;
			const s0 = rotr(x, 7) ^ rotr(x, 18) ^ (x >>> 3);
			const s1 = rotr(y, 17) ^ rotr(y, 19) ^ (y >>> 10);
			w[t] = ((w[t - 16] as number) + s0 + (w[t - 7] as number) + s1) | 0;
		}
		let a = h0;
		let b = h1;
		let c = h2;
		let d = h3;
		let e = h4;
		let f = h5;
		let g = h6;
		let h = h7;
		for (let t = 0; t < 64; t++) {
			const s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
			const choice = (e & f) ^ (~e & g);
			const t1 = (h + s1 + choice + (K[t] as number) + (w[t] as number)) | 0;
			const s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
			const majority = (a & b) ^ (a & c) ^ (b & c);
			const t2 = (s0 + majority) | 0;
			h = g;
			g = f;
			f = e;
			e = (d + t1) | 0;
			d = c;
			c = b;
			b = a;
			a = (t1 + t2) | 0;
		}
		h0 = (h0 + a) | 0;
		h1 = (h1 + b) | 0;
		h2 = (h2 + c) | 0;
		h3 = (h3 + d) | 0;
		h4 = (h4 + e) | 0;
		h5 = (h5 + f) | 0;
		h6 = (h6 + g) | 0;
		h7 = (h7 + h) | 0;
	}
	let hex = "";
	for (const word of [h0, h1, h2, h3, h4, h5, h6, h7]) hex += (word >>> 0).toString(16).padStart(8, "0");
	return hex;
}
