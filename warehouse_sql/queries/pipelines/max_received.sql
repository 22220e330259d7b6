-- The newest received_at over the raw tables: where the next watermark will stand (kept at insert time in
-- raw_received; epoch when nothing has been stored yet). The newest batch record counts too: a batch resent
-- after a crash that had stored its rows (and lost their views, raw_received's among them) lands no row, and
-- its record is what tells the schedules that the `event_counters` asset has something to compare.
SELECT greatest(
    (SELECT max(received) FROM raw_received),
    (SELECT max(received_at) FROM ingest_batches)
)
