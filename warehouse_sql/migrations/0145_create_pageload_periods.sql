-- One table of page-load states instead of an hour table and a day table, with blocks of days in it, as the
-- request states have (migration 0144): a page-load view reads its window's whole hours and days with one table
-- read instead of two (each read in a query is another branch for the engine to analyse and plan, the larger part
-- of a view's time), and a view that does not show days reads a 30-day window as a few blocks instead of 30 days.
--   start, hours   the period a row covers: an hour (hours = 1), a UTC day (24), or an aligned block of 2, 4, 8
--                  or 16 days (48 … 384; `start` a multiple of that many days since 1970-01-01). Hours come from
--                  the facts, days from their hours, blocks from their days — each written by the same tick
--                  (queries/pipelines/pageload_hours.sql, pageload_days.sql, pageload_spans.sql): sums, merged
--                  histograms and distribution counts, the first page load, the 3 fastest and slowest of the
--                  parts, so a block gives exactly what its days give. A view reads a window's whole hours and
--                  days as the fewest periods that tile them (PerfFilters.periods); a view that shows days reads
--                  days, not blocks.
--   the rest       as `pageload_hours` had them (migrations 0136–0139): counts, sums, 1 % log histograms.
-- Sorted by period first, in granules of 256 rows, as the request states: a view's hours, days and blocks are a
-- few ranges of the table (sorted by page first, the all-pages views read most of the table's hour rows: 56 of its
-- 69 granules for a 30-day window at 1 M page loads, and took half as long again; a page's detail reads the other
-- pages' rows of its periods too, which cost it nothing measurable).
-- Replaces `pageload_hours` / `pageload_days`; the states fill again on the asset's next run, which starts over
-- from the raw layer. Re-running a period replaces its rows (ReplacingMergeTree on materialized_at; views read
-- FINAL).
DROP TABLE IF EXISTS pageload_hours;

DROP TABLE IF EXISTS pageload_days;

CREATE TABLE IF NOT EXISTS pageload_periods
(
    org_id           UInt64,
    project_id       UInt64,
    start            DateTime('UTC'),
    hours            UInt16,
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    page             LowCardinality(String),
    views            UInt64,
    first_ts         DateTime64(3, 'UTC'),
    load_sum         Float64,
    load_hist        Tuple(Array(Float32), Array(UInt32)),
    ttfb_sum         Float64,
    ttfb_n           UInt64,
    ttfb_hist        Tuple(Array(Float32), Array(UInt32)),
    dom_sum          Float64,
    dom_n            UInt64,
    dom_hist         Tuple(Array(Float32), Array(UInt32)),
    resource_sum     Float64,
    resource_n       UInt64,
    lcp_n            UInt64,
    lcp_hist         Tuple(Array(Float32), Array(UInt32)),
    inp_n            UInt64,
    inp_hist         Tuple(Array(Float32), Array(UInt32)),
    cls_n            UInt64,
    cls_hist         Tuple(Array(Float32), Array(UInt32)),
    fcp_n            UInt64,
    fcp_hist         Tuple(Array(Float32), Array(UInt32)),
    score_sum        Float64,
    score_n          UInt64,
    api_calls        UInt64,
    api_errors       UInt64,
    api_hist         Tuple(Array(Float32), Array(UInt32)),
    js_bytes         Int64,
    dist             Tuple(Array(Int64), Array(UInt32)),
    fastest          Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64))),
    slowest          Array(Tuple(Float64, String, DateTime64(3, 'UTC'), Nullable(Float64))),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, hours, start, page, environment, release, browser)
TTL start + toIntervalHour(hours) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
