-- One row per page load (op pageload) with everything the performance views read about it, computed once by the
-- page_metrics asset for the hours that received data (queries/pipelines/pageload_facts.sql): its dimensions
-- (page, environment, release, browser), load time, web vitals (NULL when the browser did not report one), DOM
-- ready, total resource time, API calls (count, durations, failures), JavaScript bytes and its score. A view
-- then reads ~120 bytes per page load from one table sorted by time instead of joining the raw transactions
-- with their ~10 spans, and every percentile stays exact (the values themselves are kept).
-- Re-running an hour replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS pageload_facts
(
    org_id           UInt64,
    project_id       UInt64,
    ts               DateTime64(3, 'UTC'),
    event_id         UUID,
    page             LowCardinality(String),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    mobile           UInt8,
    load_ms          Float64,
    ttfb             Nullable(Float64),
    fcp              Nullable(Float64),
    lcp              Nullable(Float64),
    inp              Nullable(Float64),
    cls              Nullable(Float64),
    dom_ready        Nullable(Float64),
    resource_ms      Nullable(Float64),
    score            Nullable(Float64),
    api_calls        UInt32,
    api_errors       UInt32,
    api_ms           Array(Float64),
    js_bytes         Int64,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, ts, event_id)
TTL toDateTime(ts) + INTERVAL ${retention_days} DAY;

-- The facts fill on page_metrics' next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
