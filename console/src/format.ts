/** How numbers and times read in the console. Money arrives as a JSON number in major units; it is only shown. */

const moneyFormats = new Map<string, Intl.NumberFormat>();

export function money(amount: number, currency: string): string {
	let format = moneyFormats.get(currency);
	if (!format) {
		try {
			format = new Intl.NumberFormat("en-US", { style: "currency", currency });
		} catch {
			format = new Intl.NumberFormat("en-US", { maximumFractionDigits: 12 });
		}
		moneyFormats.set(currency, format);
	}
	return format.format(amount);
}

const quantityFormat = new Intl.NumberFormat("en-US", { maximumFractionDigits: 12 });

export function quantity(value: number): string {
	return quantityFormat.format(value);
}

export function percent(value: number): string {
	return `${value.toFixed(2)} %`;
}

/** Billing runs on UTC, so times are shown in UTC too. */
export function dateTime(iso: string | null): string {
	return iso ? `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC` : "—";
}

export function day(iso: string | null): string {
	return iso ? iso.slice(0, 10) : "—";
}
