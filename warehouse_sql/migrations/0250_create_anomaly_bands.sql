-- The expectation and band of every anomaly rule's hourly buckets (docs/alerts.md, "Anomaly rules"), written by
-- the `anomaly_bands` asset from the metrics layer's hourly values (stacklens/anomalies): per rule and hour, the
-- value, its samples, the expected value, the band's edges, the score, the seasonality used and whether the rule
-- was firing. A later run replaces an hour's row (ReplacingMergeTree on computed_at). Grain: one row per rule
-- and hour (UTC).
CREATE TABLE IF NOT EXISTS anomaly_bands
(
    org_id       UInt64,
    project_id   UInt64,
    rule_id      UInt64,
    bucket       DateTime('UTC'),
    value        Nullable(Float64),        -- null: a gap (no samples)
    samples      Float64,
    expected     Nullable(Float64),        -- null: learning
    lower        Nullable(Float64),
    upper        Nullable(Float64),
    score        Nullable(Float64),
    seasonality  LowCardinality(String),   -- weekly | daily | none | learning
    firing       UInt8,
    computed_at  DateTime64(3, 'UTC')
)
ENGINE = ReplacingMergeTree(computed_at)
PARTITION BY toYYYYMM(bucket)
ORDER BY (org_id, rule_id, bucket)
TTL bucket + INTERVAL 35 DAY
