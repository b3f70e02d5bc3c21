/** package: units are sold in whole packages; a started package is paid in full. */
import { Decimal } from "../../lib/decimal";
import type { PackageCharge } from "../charges";
import type { ModelResult } from "../rate";

export function ratePackage(
	charge: Pick<PackageCharge, "package_size" | "package_price">,
	billable: Decimal,
): ModelResult {
	const packages = billable.divCeilInt(Decimal.from(charge.package_size));
	return { amount: packages.mul(Decimal.from(charge.package_price)) };
}
