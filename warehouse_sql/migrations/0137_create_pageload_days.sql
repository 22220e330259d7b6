-- Per UTC day the states of `pageload_hours` merged (same columns; `day` is the day's midnight), written by the
-- page_metrics asset for the days whose hours it refreshed. A view reads its window's whole days here, the whole
-- hours of its partial first and last day from `pageload_hours` and only the partial edge hours from
-- `pageload_facts`: a day's histograms hold a few hundred buckets however many page loads it counts, so a 30-day
-- window merges ~30 rows per key at any volume. Sorted by page first, in small granules: a page's own views (its
-- detail) read only its rows' histograms.
-- Re-running a day replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS pageload_days
(
    org_id           UInt64,
    project_id       UInt64,
    day              DateTime('UTC'),
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
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(day)
ORDER BY (project_id, org_id, page, day, environment, release, browser)
TTL day + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256
