/** How numbers and times read in the console. Money arrives as a JSON number in major units; it is only shown. */

const moneyFormats = new Map<string, Intl.NumberFormat>();

function moneyFormat(currency: string): Intl.NumberFormat {
	let format = moneyFormats.get(currency);
	if (!format) {
		try {
			format = new Intl.NumberFormat("en-US", { style: "currency", currency });
		} catch {
			format = new Intl.NumberFormat("en-US", { maximumFractionDigits: 12 });
		}
		moneyFormats.set(currency, format);
	}
	return format;
}

/** How many decimals the currency shows (2 for USD, 0 for JPY; 2 without a currency). */
export function shownDigits(currency?: string): number {
	return currency === undefined ? 2 : (moneyFormat(currency).resolvedOptions().maximumFractionDigits ?? 2);
}

/** The value as shown with `digits` decimals: what rounds to zero is 0, never a negative zero. */
function unsignedZero(value: number, digits: number): number {
	return Math.abs(value) < 0.5 * 10 ** -digits ? 0 : value;
}

export function money(amount: number, currency: string): string {
	return moneyFormat(currency).format(unsignedZero(amount, shownDigits(currency)));
}

/** Whether the figure reads negative as shown (money in its currency's decimals, else 2): what to mark red. */
export function belowZero(value: number, currency?: string): boolean {
	return unsignedZero(value, shownDigits(currency)) < 0;
}

const quantityFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 12 });

export function quantity(value: number): string {
	return quantityFormat.format(value);
}

export function percent(value: number): string {
	return `${unsignedZero(value, 2).toFixed(2)} %`;
}

/** Billing runs on UTC, so times are shown in UTC too. */
export function dateTime(iso: string | null): string {
	return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : "—";
}

export function day(iso: string | null): string {
	return iso ? iso.slice(0, 10) : "—";
}
