-- The figures recorded for landed batches of one organization (`ingest_batches`), for a set of batch ids: the
-- front door looks up every keyed request of a flush at once (stacklens/ingest/front_door.py). The writer numbers
-- the parameters of each copy and joins the copies of a flush with UNION ALL (one round trip).
SELECT org_id, batch_id, lines, accepted, duplicates, skipped, rejected, body_hash
FROM ingest_batches FINAL
WHERE org_id = {org:UInt64} AND batch_id IN {batches:Array(String)}
