-- The figures recorded for landed batches of one organization (`ingest_batches`), for a set of batch ids: the
-- front door looks up every keyed request of a flush at once (stacklens/ingest/front_door.py). The writer numbers
-- the parameters of each copy and joins the copies of a flush with UNION ALL (one round trip). Without FINAL:
-- a batch recorded twice (a drain retried after a crash) has a row per version, and the writer keeps the latest
-- (the table's version column, received_at), as FINAL would, at a third of FINAL's cost per look-up.
SELECT org_id, batch_id, lines, accepted, duplicates, skipped, rejected, body_hash, received_at
FROM ingest_batches
WHERE org_id = {org:UInt64} AND batch_id IN {batches:Array(String)}
