-- Per hour states of `pageload_facts` for the page-load views (overview, pages, page detail, trends, releases,
-- filters): one row per hour, filter dimensions (environment, release, browser) and page, written by the
-- page_metrics asset from the facts of the hours that received data (macro pageload_state_row). A view merges the
-- window's whole days (`pageload_days`) and hours here and reads only its partial edge hours from the facts
-- (macro pageload_window): a few hundred rows per hour instead of one per page load.
--   views, first_ts        page loads and the first one's start (a release's first seen)
--   *_sum, *_n             sums and counts of reported values (averages; NULL = not reported)
--   *_hist                 (value, count) of load, TTFB, DOM ready, LCP, INP, CLS, FCP and the API call durations,
--                          each value rounded to its 1 % wide log bucket (macro pageload_state_row; ms and the
--                          unitless CLS alike): a percentile of the merged histogram
--                          (quantileExactWeightedInterpolatedArray) is within 0.5 % of the exact one
--   dist                   the page detail's distribution buckets, counted exactly
-- Re-running an hour replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS pageload_hours
(
    org_id           UInt64,
    project_id       UInt64,
    hour             DateTime('UTC'),
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
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, org_id, hour, environment, release, browser, page)
TTL hour + INTERVAL ${retention_days} DAY;

-- The states fill with the facts on the asset's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
