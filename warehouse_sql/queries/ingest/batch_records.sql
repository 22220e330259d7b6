-- The figures recorded for landed batches of one organization (`ingest_batches`), for a set of batch ids: the
-- front door looks up every keyed request of a flush at once (stacklens/ingest/front_door.py). The writer numbers
-- the parameters of each copy and joins the copies of a flush with UNION ALL (one round trip), together with
-- the flush's duplicate look-ups: the rows have their shape (stored_event_ids.sql: a name, the organization, a
-- number, a text), here 'ingest_batches', the organization, the version (received_at in ms) and the figures as
-- a JSON array. Without FINAL: a batch recorded twice (a drain retried after a crash) has a row per version, and
-- the writer keeps the latest, as FINAL would, at a third of FINAL's cost per look-up.
SELECT 'ingest_batches', org_id, toUInt64(toUnixTimestamp64Milli(received_at)),
       toJSONString(tuple(batch_id, lines, accepted, duplicates, skipped, rejected, body_hash))
FROM ingest_batches
WHERE org_id = {org:UInt64} AND batch_id IN {batches:Array(String)}
