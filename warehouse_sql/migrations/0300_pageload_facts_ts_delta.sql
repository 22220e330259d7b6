-- A page load's time in `pageload_facts` stored as the difference from the row before it (Delta, then LZ4), as
-- `transactions.timestamp` (migration 0290): the table is sorted by (project_id, ts, event_id), so the column
-- shrinks ~90x. A SQL panel or `stacklens sql` statement over the facts filters on the window and decompresses
-- it for every row it scans: the demo's "slowest pages" panel over 10 M page loads takes ~265 instead of ~370 ms
-- of CPU (bench/RESULTS.md, "analyst dashboards"). The values and the type are the same (no mutation): existing
-- parts keep their codec until they are merged again.
ALTER TABLE pageload_facts MODIFY COLUMN ts DateTime64(3, 'UTC') CODEC(Delta(8), LZ4)
