-- The web vitals of a transaction as columns of their own, computed from its `measurements` map as a row is
-- written. Reading one vital out of the map reads every key and value of every row's map: for 10 M page loads
-- ~0.7 s of CPU before any aggregate runs (bench/RESULTS.md, Explore), while a column of its own reads only its
-- values. Explore's page loads read these (warehouse_sql/queries/explore/pageloads.sql). A vital the transaction
-- did not report is NULL, never 0, as the map's readers treat a missing key. The map stays the source: these
-- only mirror it, so they are not inserted (MATERIALIZED) and `SELECT *` leaves them out.
ALTER TABLE transactions
    ADD COLUMN IF NOT EXISTS vital_ttfb Nullable(Float64) MATERIALIZED
        if(mapContains(measurements, 'ttfb'), measurements['ttfb'], NULL)
        AFTER measurements,
    ADD COLUMN IF NOT EXISTS vital_fcp Nullable(Float64) MATERIALIZED
        if(mapContains(measurements, 'fcp'), measurements['fcp'], NULL)
        AFTER vital_ttfb,
    ADD COLUMN IF NOT EXISTS vital_lcp Nullable(Float64) MATERIALIZED
        if(mapContains(measurements, 'lcp'), measurements['lcp'], NULL)
        AFTER vital_fcp,
    ADD COLUMN IF NOT EXISTS vital_inp Nullable(Float64) MATERIALIZED
        if(mapContains(measurements, 'inp'), measurements['inp'], NULL)
        AFTER vital_lcp,
    ADD COLUMN IF NOT EXISTS vital_cls Nullable(Float64) MATERIALIZED
        if(mapContains(measurements, 'cls'), measurements['cls'], NULL)
        AFTER vital_inp,
    ADD COLUMN IF NOT EXISTS vital_dom_ready Nullable(Float64) MATERIALIZED
        if(mapContains(measurements, 'dom_ready'), measurements['dom_ready'], NULL)
        AFTER vital_cls;

-- Rows written before this migration get their columns from a mutation that adds these columns' files to each part
-- and leaves the rest as it is (10 M transactions: ~5 s; the ALTER waits for it where `mutations_sync` says so, as
-- the embedded engine's default does). A part that does not have them yet computes them from the map when read, so
-- the values are the same either way, only slower for that part.
ALTER TABLE transactions
    MATERIALIZE COLUMN vital_ttfb,
    MATERIALIZE COLUMN vital_fcp,
    MATERIALIZE COLUMN vital_lcp,
    MATERIALIZE COLUMN vital_inp,
    MATERIALIZE COLUMN vital_cls,
    MATERIALIZE COLUMN vital_dom_ready
