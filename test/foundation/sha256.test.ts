import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sha256HexSync } from "../../src/lib/sha256";
import { sha256Hex } from "../../src/lib/time";

// The synchronous SHA-256 the key lookup uses must give exactly WebCrypto's digest: keys are stored hashed by it.
describe("sha256HexSync", () => {
	it("matches the FIPS 180-4 examples", () => {
		expect(sha256HexSync("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
		expect(sha256HexSync("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
		expect(sha256HexSync("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
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
					expect(sha256HexSync(text)).toBe(await sha256Hex(text));
				},
			),
			{ numRuns: 500 },
		);
	});
});
