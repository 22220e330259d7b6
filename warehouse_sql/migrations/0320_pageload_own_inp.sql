-- Each page load's own INP — the `inp` measurement it was sent with, what Explore's `inp_ms` is (queries/explore/
-- pageloads.sql: `transactions.vital_inp`, bucketed as `inp_bucket`) — kept with the page load and summed per
-- period beside `inp`, the facts' INP (the measurement, else the largest INP of its trace's standalone interaction
-- spans, which the views, budgets and alert rules read). So an Explore question on INP over the periods' fields
-- reads the page-load states as one on LCP does (stacklens/explore/pageload_states.py) with the figure it had over
-- the raw rows: a dashboard's INP p75 over 10 M page loads ~10 thousand state rows instead of 10 M raw rows
-- (bench/RESULTS.md, "analyst dashboards").
--   own_inp       the measurement, NULL when the page load was sent without one (as `transactions.vital_inp`);
--   own_inp_hist  its (value, count) entry as the other histograms keep theirs (macro pageload_hist_value: the
--                 value of `transactions.inp_bucket`, to the bit);
--   own_inp_n, own_inp_hist in `pageload_periods`: the count and the summed histogram (macro pageload_merge).
ALTER TABLE pageload_facts
    ADD COLUMN IF NOT EXISTS own_inp Nullable(Float64) AFTER inp,
    ADD COLUMN IF NOT EXISTS own_inp_hist Tuple(Array(Float32), Array(UInt32)) MATERIALIZED
        (arrayMap(x -> ${pageload_hist_value},
                  if(own_inp IS NULL, [], [assumeNotNull(own_inp)])),
         if(own_inp IS NULL, [], [toUInt32(1)]))
        AFTER inp_hist;

ALTER TABLE pageload_periods
    ADD COLUMN IF NOT EXISTS own_inp_n UInt64 AFTER inp_hist,
    ADD COLUMN IF NOT EXISTS own_inp_hist Tuple(Array(Float32), Array(UInt32)) AFTER own_inp_n;

-- The facts and their states fill again on the page-load step's next run: it starts over from the raw layer. Until
-- then Explore reads no states (its watermark is before any window) and answers from the raw rows.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('pageload_facts', toDateTime64(0, 3, 'UTC'), now64(6))
