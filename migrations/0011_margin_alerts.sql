-- Margin alerts (docs/margins.md#margin-alerts): an alert is of type "usage" (a metric's quantity or the amount so
-- far, as before) or "margin" (the subscription's live margin percent below the threshold once its costs exceed
-- min_costs, an exact decimal; null for usage alerts).
ALTER TABLE `alerts` ADD `type` text DEFAULT 'usage' NOT NULL;--> statement-breakpoint
ALTER TABLE `alerts` ADD `min_costs` text;
