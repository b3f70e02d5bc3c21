import type { ThresholdRequest } from "../durable-objects/usage-accumulator/types";
import type { Environment } from "../env";

/** One unit of the monthly run: generate a period's invoices for one account. */
export interface InvoiceJob {
	kind?: "period";
	environment: Environment;
	billingPeriod: string;
	accountId: string;
}

declare module "../env" {
	interface QueueMessages {
		INVOICE_QUEUE: InvoiceJob | ThresholdRequest;
	}
}
