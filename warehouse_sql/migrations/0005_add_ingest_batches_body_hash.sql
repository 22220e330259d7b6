-- The digest of the batch's decompressed body: an Idempotency-Key reused with a different body is refused
-- (409) instead of answered with the first body's figures while landing nothing. Rows recorded before this
-- column existed read '' and are taken as the same body (nothing to compare with).
ALTER TABLE ingest_batches ADD COLUMN IF NOT EXISTS body_hash String DEFAULT '' AFTER rejected
