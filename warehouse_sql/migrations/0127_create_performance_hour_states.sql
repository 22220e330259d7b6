-- Hourly aggregate states under the performance and release marts, so a tick re-reads the raw rows of the
-- hours that received data (~1/336 of two weeks) and rebuilds a day, a week or a release by merging states,
-- never by re-reading the day's, week's or release's raw rows. The percentile states are exact
-- (quantilesExactInclusive keeps the values), so every mart keeps its exact percentiles.
--
-- raw_arrival_hours: per raw table, project and hour (of the row's own timestamp) the newest received_at,
-- fed at insert time: which hours, days and weeks a tick must rebuild, without scanning received_at of the raw
-- tables. Created, filled from the rows already stored, then fed by one materialized view per raw table.
CREATE TABLE IF NOT EXISTS raw_arrival_hours
(
    source      LowCardinality(String),   -- events | transactions | spans
    project_id  UInt64,
    hour        DateTime('UTC'),
    received    SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
)
ENGINE = AggregatingMergeTree
ORDER BY (source, hour, project_id)
TTL hour + INTERVAL ${retention_days} DAY;

INSERT INTO raw_arrival_hours
SELECT 'events', project_id, toStartOfHour(timestamp) AS hour, max(received_at) FROM events GROUP BY project_id, hour
UNION ALL
SELECT 'transactions', project_id, toStartOfHour(timestamp) AS hour, max(received_at) FROM transactions
GROUP BY project_id, hour
UNION ALL
SELECT 'spans', project_id, toStartOfHour(timestamp) AS hour, max(received_at) FROM spans GROUP BY project_id, hour;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_arrival_hours_events_mv TO raw_arrival_hours AS
SELECT 'events' AS source, project_id, toStartOfHour(timestamp) AS hour, max(received_at) AS received
FROM events GROUP BY project_id, hour;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_arrival_hours_transactions_mv TO raw_arrival_hours AS
SELECT 'transactions' AS source, project_id, toStartOfHour(timestamp) AS hour, max(received_at) AS received
FROM transactions GROUP BY project_id, hour;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_arrival_hours_spans_mv TO raw_arrival_hours AS
SELECT 'spans' AS source, project_id, toStartOfHour(timestamp) AS hour, max(received_at) AS received
FROM spans GROUP BY project_id, hour;

-- Transactions (every op) per project, page (route), release and hour, with the http.client spans of page
-- loads and navigations: what page_metrics, weekly_trends and release_impact merge. Written by page_metrics.
CREATE TABLE IF NOT EXISTS page_hour_states
(
    org_id           UInt64,
    project_id       UInt64,
    page             String,
    release          String,
    hour             DateTime('UTC'),
    samples          UInt64,            -- page loads, navigations and INP interactions
    views            UInt64,            -- distinct page loads and navigations
    pageloads        UInt64,            -- distinct page loads
    first_seen       DateTime64(3, 'UTC'),
    load_n           UInt64,
    load_sum         Float64,
    load_q           AggregateFunction(quantilesExactInclusive(0.5, 0.75, 0.95), Float64),
    ttfb_n           UInt64,
    ttfb_sum         Float64,
    ttfb_q           AggregateFunction(quantilesExactInclusive(0.5, 0.75, 0.95), Float64),
    dom_n            UInt64,
    dom_sum          Float64,
    dom_q            AggregateFunction(quantilesExactInclusive(0.5, 0.75, 0.95), Float64),
    res_n            UInt64,
    res_sum          Float64,
    res_q            AggregateFunction(quantilesExactInclusive(0.5, 0.75, 0.95), Float64),
    lcp_n            UInt64,
    lcp_q            AggregateFunction(quantilesExactInclusive(0.75), Float64),
    cls_n            UInt64,
    cls_q            AggregateFunction(quantilesExactInclusive(0.75), Float64),
    inp_n            UInt64,
    inp_q            AggregateFunction(quantilesExactInclusive(0.75), Float64),
    api_calls        UInt64,
    api_sum          Float64,
    api_q            AggregateFunction(quantilesExactInclusive(0.5, 0.75, 0.95), Float64),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, page, release)
TTL hour + INTERVAL ${retention_days} DAY;

-- Resource and API spans per project, page, release, hour and resource type: resource_breakdown and the
-- JavaScript bytes of release_impact. Written by resource_breakdown.
CREATE TABLE IF NOT EXISTS resource_hour_states
(
    org_id           UInt64,
    project_id       UInt64,
    page             String,
    release          String,
    hour             DateTime('UTC'),
    resource_type    LowCardinality(String),
    requests         UInt64,
    views            AggregateFunction(uniqExact, UUID),
    total_bytes      Int64,
    load_sum         Float64,
    load_q           AggregateFunction(quantilesExactInclusive(0.95), Float64),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, page, release, resource_type)
TTL hour + INTERVAL ${retention_days} DAY;

-- Resource spans per project, page, hour and resource URL: resource_details. Written by resource_breakdown.
CREATE TABLE IF NOT EXISTS resource_detail_hour_states
(
    org_id           UInt64,
    project_id       UInt64,
    page             String,
    hour             DateTime('UTC'),
    resource         String,
    resource_type    LowCardinality(String),
    requests         UInt64,
    size_sum         Int64,
    size_max         Int64,
    decoded_sum      Int64,
    load_sum         Float64,
    load_q           AggregateFunction(quantilesExactInclusive(0.95), Float64),
    blocking         UInt8,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, page, resource)
TTL hour + INTERVAL ${retention_days} DAY;

-- API calls per project, source (server transactions / client spans), method, normalised path, release and
-- hour: api_endpoint_metrics and the API p95 of release_impact. Written by api_endpoint_metrics.
CREATE TABLE IF NOT EXISTS endpoint_hour_states
(
    org_id           UInt64,
    project_id       UInt64,
    source           LowCardinality(String),
    method           String,
    path             String,
    release          String,
    hour             DateTime('UTC'),
    calls            UInt64,
    duration_sum     Float64,
    duration_q       AggregateFunction(quantilesExactInclusive(0.5, 0.95), Float64),
    success          UInt64,
    client_errors    UInt64,
    server_errors    UInt64,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(hour)
ORDER BY (project_id, hour, source, method, path, release)
TTL hour + INTERVAL ${retention_days} DAY;

-- The states fill on the next runs: every mart built from them starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('page_metrics', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('resource_breakdown', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('weekly_trends', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('release_impact', toDateTime64(0, 3, 'UTC'), now64(6))
