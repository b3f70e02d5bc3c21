/**
 * Exact decimal arithmetic on scaled bigints: a Decimal is `units / 10^scale`.
 * Money and quantities never pass through binary floating point; numbers from JSON are read through their
 * shortest round-trip string (what `String(n)` prints), so 0.1 is exactly one tenth.
 * Values are kept normalised (no trailing zeros in `units` while scale > 0), so equal values have equal fields.
 */

const DECIMAL_PATTERN = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
// Guards against strings like "1e999999999" that would allocate enormous bigints.
const MAX_EXPONENT = 1000;

const powersOfTen: bigint[] = [1n];
function pow10(n: number): bigint {
	for (let i = powersOfTen.length; i <= n; i++) powersOfTen.push((powersOfTen[i - 1] as bigint) * 10n);
	return powersOfTen[n] as bigint;
}

function describe(x: unknown): string {
	const text = String(x);
	return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

export class Decimal {
	static readonly ZERO = new Decimal(0n, 0);
	static readonly ONE = new Decimal(1n, 0);

	/** `units` is the value times 10^scale; `scale` is also the number of decimal places. */
	readonly units: bigint;
	readonly scale: number;

	private constructor(units: bigint, scale: number) {
		while (scale > 0 && units % 10n === 0n) {
			units /= 10n;
			scale--;
		}
		this.units = units;
		this.scale = scale;
	}

	/** The value `units / 10^scale`. */
	static fromUnits(units: bigint, scale: number): Decimal {
		if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`Invalid scale: ${scale}`);
		return new Decimal(units, scale);
	}

	static from(x: string | number | bigint | Decimal): Decimal {
		if (x instanceof Decimal) return x;
		if (typeof x === "bigint") return new Decimal(x, 0);
		if (typeof x === "number") {
			if (!Number.isFinite(x)) throw new RangeError(`Not a finite number: ${describe(x)}`);
			return Decimal.parse(String(x));
		}
		if (typeof x === "string") return Decimal.parse(x.trim());
		throw new TypeError(`Not a decimal number: ${describe(x)}`);
	}

	private static parse(text: string): Decimal {
		const match = DECIMAL_PATTERN.exec(text);
		const [, sign = "", whole = "", fraction = "", exponentText = "0"] = match ?? [];
		if (!match || whole.length + fraction.length === 0) {
			throw new RangeError(`Not a decimal number: "${describe(text)}"`);
		}
		const exponent = Number(exponentText);
		if (Math.abs(exponent) > MAX_EXPONENT) throw new RangeError(`Exponent out of range: "${describe(text)}"`);
		let units = BigInt(whole + fraction);
		let scale = fraction.length - exponent;
		if (scale < 0) {
			units *= pow10(-scale);
			scale = 0;
		}
		return new Decimal(sign === "-" ? -units : units, scale);
	}

	/** Both values as integers at a common scale. */
	private align(other: Decimal): [bigint, bigint, number] {
		const scale = Math.max(this.scale, other.scale);
		return [this.units * pow10(scale - this.scale), other.units * pow10(scale - other.scale), scale];
	}

	add(other: Decimal): Decimal {
		const [a, b, scale] = this.align(other);
		return new Decimal(a + b, scale);
	}

	sub(other: Decimal): Decimal {
		const [a, b, scale] = this.align(other);
		return new Decimal(a - b, scale);
	}

	mul(other: Decimal): Decimal {
		return new Decimal(this.units * other.units, this.scale + other.scale);
	}

	/** this × percent / 100, exact: dividing by 100 only moves the decimal point. */
	mulPercent(percent: Decimal): Decimal {
		return new Decimal(this.units * percent.units, this.scale + percent.scale + 2);
	}

	/** The smallest integer ≥ this / divisor (e.g. how many packages are needed). */
	divCeilInt(divisor: Decimal): Decimal {
		if (divisor.isZero()) throw new RangeError("Division by zero");
		const [a, b] = this.align(divisor);
		const quotient = a / b;
		const remainder = a % b;
		// bigint division truncates toward zero; step up when the exact quotient is positive and not whole.
		const roundUp = remainder !== 0n && remainder > 0n === b > 0n;
		return new Decimal(roundUp ? quotient + 1n : quotient, 0);
	}

	/** this / divisor, rounded half away from zero to `scale` places (e.g. a margin percentage). */
	divRoundHalfUp(divisor: Decimal, scale: number): Decimal {
		if (divisor.isZero()) throw new RangeError("Division by zero");
		const [a, b] = this.align(divisor);
		const numerator = a * pow10(scale);
		const negative = numerator < 0n !== b < 0n;
		const n = numerator < 0n ? -numerator : numerator;
		const d = b < 0n ? -b : b;
		let quotient = n / d;
		if ((n % d) * 2n >= d) quotient++;
		return new Decimal(negative ? -quotient : quotient, scale);
	}

	negate(): Decimal {
		return new Decimal(-this.units, this.scale);
	}

	/** Rounds to `scale` decimal places, halves away from zero (2.345 → 2.35, −2.345 → −2.35). */
	roundHalfUp(scale: number): Decimal {
		if (!Number.isInteger(scale) || scale < 0) throw new RangeError(`Invalid scale: ${scale}`);
		if (this.scale <= scale) return this;
		const divisor = pow10(this.scale - scale);
		const magnitude = this.units < 0n ? -this.units : this.units;
		let rounded = magnitude / divisor;
		if ((magnitude % divisor) * 2n >= divisor) rounded++;
		return new Decimal(this.units < 0n ? -rounded : rounded, scale);
	}

	compare(other: Decimal): -1 | 0 | 1 {
		const [a, b] = this.align(other);
		return a < b ? -1 : a > b ? 1 : 0;
	}

	eq(other: Decimal): boolean {
		return this.units === other.units && this.scale === other.scale;
	}

	lt(other: Decimal): boolean {
		return this.compare(other) < 0;
	}

	lte(other: Decimal): boolean {
		return this.compare(other) <= 0;
	}

	gt(other: Decimal): boolean {
		return this.compare(other) > 0;
	}

	gte(other: Decimal): boolean {
		return this.compare(other) >= 0;
	}

	isZero(): boolean {
		return this.units === 0n;
	}

	isNegative(): boolean {
		return this.units < 0n;
	}

	isInteger(): boolean {
		return this.scale === 0;
	}

	static min(first: Decimal, ...rest: Decimal[]): Decimal {
		return rest.reduce((least, x) => (x.lt(least) ? x : least), first);
	}

	static max(first: Decimal, ...rest: Decimal[]): Decimal {
		return rest.reduce((most, x) => (x.gt(most) ? x : most), first);
	}

	static sum(values: Iterable<Decimal>): Decimal {
		let total = Decimal.ZERO;
		for (const value of values) total = total.add(value);
		return total;
	}

	/** Canonical form: no exponent, no trailing zeros, never "-0". */
	toString(): string {
		const digits = (this.units < 0n ? -this.units : this.units).toString().padStart(this.scale + 1, "0");
		const sign = this.units < 0n ? "-" : "";
		if (this.scale === 0) return sign + digits;
		return `${sign}${digits.slice(0, -this.scale)}.${digits.slice(-this.scale)}`;
	}

	/** For JSON output only; never compute with the result. */
	toNumber(): number {
		return Number(this.toString());
	}
}

/**
 * Splits `amount` into parts with `scale` decimals, proportional to `weights`, summing exactly to `amount`.
 * Largest-remainder method: every part gets the floor of its exact share, then the units left over go one each
 * to the parts with the largest remainders (ties to the earlier part), so no part is off by more than one unit.
 * When all weights are zero the whole amount goes to the first part, so the sum still holds.
 */
export function allocate(amount: Decimal, weights: readonly Decimal[], scale: number): Decimal[] {
	if (weights.length === 0) throw new RangeError("allocate needs at least one weight");
	if (weights.some((w) => w.isNegative())) throw new RangeError("allocate weights must not be negative");
	if (!amount.roundHalfUp(scale).eq(amount)) {
		throw new RangeError(`Cannot allocate ${amount} exactly at ${scale} decimal places`);
	}
	const parts = weights.map(() => Decimal.ZERO);
	const totalWeight = Decimal.sum(weights);
	if (totalWeight.isZero()) {
		parts[0] = amount;
		return parts;
	}
	const weightScale = Math.max(...weights.map((w) => w.scale));
	const integerWeights = weights.map((w) => w.units * pow10(weightScale - w.scale));
	const total = integerWeights.reduce((a, b) => a + b, 0n);
	const amountUnits = amount.units * pow10(scale - amount.scale);
	const magnitude = amountUnits < 0n ? -amountUnits : amountUnits;

	const shares = integerWeights.map((w, index) => ({
		index,
		floor: (magnitude * w) / total,
		remainder: (magnitude * w) % total,
	}));
	let leftover = magnitude - shares.reduce((sum, s) => sum + s.floor, 0n);
	const byRemainder = [...shares].sort((a, b) =>
		a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1,
	);
	for (const share of byRemainder) {
		if (leftover === 0n) break;
		share.floor++;
		leftover--;
	}
	return shares.map((s) => Decimal.fromUnits(amountUnits < 0n ? -s.floor : s.floor, scale));
}
