-- The landing attempts settled among those received after {young}: `record` — an attempt's batch record, its
-- last write (after every insert and the views they fed), so it finished; `handled` — a dead attempt an earlier
-- run already compared (event_counter_repairs). Read before the comparisons: a record seen here was written
-- before anything they read.
SELECT 'record' AS kind, org_id, batch_id, received_at FROM ingest_batches
WHERE received_at > {young:DateTime64(3, 'UTC')}
UNION ALL
SELECT 'handled' AS kind, org_id, batch_id, received_at FROM event_counter_repairs
WHERE received_at > {young:DateTime64(3, 'UTC')}
