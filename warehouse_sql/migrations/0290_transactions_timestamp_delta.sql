-- A transaction's start time stored as the difference from the row before it (Delta, then LZ4): the table is
-- sorted by (project_id, timestamp, event_id), so the differences are small and the column shrinks from ~4 bytes
-- a row to ~0.05 (45 MB → 0.5 MB over 10 M page loads). Every read of raw page loads — Explore's page-load
-- questions the states cannot answer (INP, DOM ready), SQL panels, the pipelines' tick — filters on the window
-- and so decompresses this column for every row it scans: ~120 → ~20 ms per 10 M rows on one thread
-- (bench/RESULTS.md, "analyst dashboards"). The values and the type are the same (no mutation): existing parts
-- keep their codec until they are merged again.
ALTER TABLE transactions MODIFY COLUMN timestamp DateTime64(3, 'UTC') CODEC(Delta(8), LZ4)
