-- The figures recorded for a batch that already landed (`ingest_batches`): a resent batch (same
-- Idempotency-Key) is answered with them and lands nothing (stacklens/ingest/writer.py).
SELECT lines, accepted, duplicates, skipped, rejected, body_hash
FROM ingest_batches FINAL
WHERE org_id = {org:UInt64} AND batch_id = {batch:String}
LIMIT 1
