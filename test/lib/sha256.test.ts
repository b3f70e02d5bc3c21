import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../src/lib/sha256";

async function webCryptoSha256Hex(text: string): Promise<string> {
	const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
	return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

// The key lookup hashes every request's key with it: it must give exactly the digest keys were stored under
// (WebCrypto's, and the hand-written SHA-256's before it).
describe("sha256Hex", () => {
	it("matches the FIPS 180-4 examples", () => {
		expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
		expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
		expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
			"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
		);
	});

	it("equals WebCrypto's digest for any text, across block boundaries and in any script", async () => {
		const lengths = fc.oneof(fc.integer({ min: 0, max: 200 }), fc.constantFrom(55, 56, 63, 64, 65, 119, 120));
		await fc.assert(
			fc.asyncProperty(
				fc.oneof(
					lengths.chain((n) => fc.string({ minLength: n, maxLength: n })),
					fc.string({ unit: "grapheme", maxLength: 80 }),
					fc.stringMatching(/^sk_(live|test|api)_[A-Za-z0-9_]{8,120}$/),
				),
				async (text) => {
					expect(sha256Hex(text)).toBe(await webCryptoSha256Hex(text));
				},
			),
			{ numRuns: 500 },
		);
	});

	it("hashes a 40-character key in a few microseconds (printed: the figure behind lib/sha256.ts)", () => {
		const key = "sk_live_0123456789abcdefghijklmnopqrstuv";
		const n = 20_000;
		for (let i = 0; i < 2_000; i++) sha256Hex(key);
		// The best of a few rounds: the machine's other work only ever adds time.
		let best = Number.POSITIVE_INFINITY;
		for (let round = 0; round < 10; round++) {
			const start = performance.now();
			for (let i = 0; i < n; i++) sha256Hex(key);
			best = Math.min(best, ((performance.now() - start) * 1000) / n);
		}
		console.log(`sha256Hex: ${best.toFixed(2)} µs per 40-character key (best of 10 rounds of ${n})`);
		expect(sha256Hex(key)).toHaveLength(64);
	});
});
