-- Uptime monitors' probes (stacklens/monitors/uptime.py): one row per probe of a monitor's URL, written by the
-- `monitor_checks` asset every minute. Read by the monitor's page (uptime per day), Explore (dataset
-- `monitor_checks`), the `uptime_pct` budgets and the time charts. Grain: one row per monitor and probe.
CREATE TABLE IF NOT EXISTS monitor_checks
(
    org_id         UInt64,
    project_id     UInt64,
    monitor_id     UInt64,
    monitor_slug   LowCardinality(String),
    timestamp      DateTime64(3, 'UTC'),
    status         LowCardinality(String),   -- ok | down
    http_code      UInt16,                   -- 0: no answer (refused, timed out, TLS failed)
    ttfb_ms        Nullable(Float64),        -- time to the answer's headers
    total_ms       Nullable(Float64),        -- time to the answer's end (or the failure)
    tls_days_left  Nullable(Int32),          -- days of validity left on the server's certificate (https)
    error          String CODEC(ZSTD(3))     -- why a probe is down, in words
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(timestamp)
ORDER BY (org_id, project_id, monitor_id, timestamp)
TTL toDateTime(timestamp) + INTERVAL ${retention_days} DAY
