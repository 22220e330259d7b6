-- Each transaction's load time and web vitals as the page-load histograms keep them: the value of the 1 % log
-- bucket (macro pageload_hist_value, the expression of `pageload_facts`' `*_hist` columns, migration 0138), NULL
-- where the vital was not reported, computed as a row is written. Explore's page loads take their percentiles
-- over these columns with the views' function (warehouse_sql/queries/explore/pageloads.sql), so a p75 in Explore
-- is the views', the budgets' and the alerts' to the last digit; reading a stored Float32 costs the engine less
-- than the bucket's log, round and exp on every row of every question (10 M page loads, five vitals: ~0.7 s of
-- CPU, bench/RESULTS.md). Like the vitals' columns (0013) they mirror the row and are not inserted
-- (MATERIALIZED: `SELECT *` leaves them out).
ALTER TABLE transactions
    ADD COLUMN IF NOT EXISTS load_bucket Float32 MATERIALIZED
        arrayMap(x -> ${pageload_hist_value}, [duration_ms])[1]
        AFTER vital_dom_ready,
    ADD COLUMN IF NOT EXISTS ttfb_bucket Nullable(Float32) MATERIALIZED
        if(mapContains(measurements, 'ttfb'), arrayMap(x -> ${pageload_hist_value}, [measurements['ttfb']])[1], NULL)
        AFTER load_bucket,
    ADD COLUMN IF NOT EXISTS fcp_bucket Nullable(Float32) MATERIALIZED
        if(mapContains(measurements, 'fcp'), arrayMap(x -> ${pageload_hist_value}, [measurements['fcp']])[1], NULL)
        AFTER ttfb_bucket,
    ADD COLUMN IF NOT EXISTS lcp_bucket Nullable(Float32) MATERIALIZED
        if(mapContains(measurements, 'lcp'), arrayMap(x -> ${pageload_hist_value}, [measurements['lcp']])[1], NULL)
        AFTER fcp_bucket,
    ADD COLUMN IF NOT EXISTS inp_bucket Nullable(Float32) MATERIALIZED
        if(mapContains(measurements, 'inp'), arrayMap(x -> ${pageload_hist_value}, [measurements['inp']])[1], NULL)
        AFTER lcp_bucket,
    ADD COLUMN IF NOT EXISTS cls_bucket Nullable(Float32) MATERIALIZED
        if(mapContains(measurements, 'cls'), arrayMap(x -> ${pageload_hist_value}, [measurements['cls']])[1], NULL)
        AFTER inp_bucket,
    ADD COLUMN IF NOT EXISTS dom_ready_bucket Nullable(Float32) MATERIALIZED
        if(mapContains(measurements, 'dom_ready'), arrayMap(x -> ${pageload_hist_value}, [measurements['dom_ready']])[1], NULL)
        AFTER cls_bucket;

-- Rows written before: a mutation adds these columns' files to each part (as 0013 does for the vitals); a part
-- that does not have them yet computes them when read, with the same values.
ALTER TABLE transactions
    MATERIALIZE COLUMN load_bucket,
    MATERIALIZE COLUMN ttfb_bucket,
    MATERIALIZE COLUMN fcp_bucket,
    MATERIALIZE COLUMN lcp_bucket,
    MATERIALIZE COLUMN inp_bucket,
    MATERIALIZE COLUMN cls_bucket,
    MATERIALIZE COLUMN dom_ready_bucket
