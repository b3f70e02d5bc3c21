-- A write and the answer of its Idempotency-Key commit together (docs/conventions.md#the-idempotency-key-header):
-- the write's own D1 batch marks the key's record `committed` and names what it wrote in `resources` (a JSON
-- array of ids). A repeat after a crash between that batch and the stored response finds the record committed and
-- answers from those resources, instead of taking the key as abandoned and writing a second time.
ALTER TABLE `idempotency_records` ADD COLUMN `resources` text;
