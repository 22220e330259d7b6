-- What the resources, API endpoints and recommendations views read, one row per request, written by the
-- resource_breakdown and api_endpoint_metrics assets for the hours that received data: the raw span's figures
-- with what the views derived per request until now done once (resource type, URL without query string, host,
-- parameterised endpoint path) and the page load's browser, FCP and host joined in, so a view reads one table
-- sorted by time with the same filter columns as `pageload_facts` (ts, page, environment, release, browser).
-- Re-running an hour replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).

-- Resource spans (op resource.*) and browser API calls (http.client) of page loads and navigations.
CREATE TABLE IF NOT EXISTS resource_facts
(
    org_id           UInt64,
    project_id       UInt64,
    ts               DateTime64(3, 'UTC'),
    load_id          UUID,
    span_id          String,
    page             LowCardinality(String),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    is_request       UInt8,                     -- http.client, resource.fetch, resource.xmlhttprequest
    resource         LowCardinality(String),  -- URL without query string and fragment
    host             LowCardinality(String),
    page_host        LowCardinality(String),  -- the page load's own host (third party = another host)
    resource_type    LowCardinality(String),  -- JavaScript | CSS | Images | Fonts | API | Other
    duration_ms      Float64,
    enc              Int64,                     -- encoded body bytes (else transfer size, else 0)
    dec              Int64,                     -- decoded body bytes (else encoded)
    transfer_size    Nullable(Int64),
    blocking_status  LowCardinality(String),  -- blocking | non-blocking | '' (not reported)
    fcp              Nullable(Float64),         -- the page load's FCP
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, ts, load_id, span_id)
TTL toDateTime(ts) + INTERVAL ${retention_days} DAY;

-- API calls: server transactions (op http.server) and browser calls (http.client spans), per parameterised path.
CREATE TABLE IF NOT EXISTS endpoint_facts
(
    org_id           UInt64,
    project_id       UInt64,
    ts               DateTime64(3, 'UTC'),
    tx               UUID,                      -- the server transaction, or the page load making the call
    span_id          String,                    -- '' for a server transaction
    source           LowCardinality(String),  -- server | client
    method           LowCardinality(String),
    path             LowCardinality(String),  -- ids -> {id}, UUIDs -> {uuid}, digests -> {hash}
    page             LowCardinality(String),  -- the calling page ('' for server transactions)
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    duration_ms      Float64,
    status_code      UInt16,
    bytes            Nullable(Int64),
    description      String,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, ts, tx, span_id)
TTL toDateTime(ts) + INTERVAL ${retention_days} DAY;

-- The facts fill on the assets' next runs: they start over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('resource_breakdown', toDateTime64(0, 3, 'UTC'), now64(6)),
       ('api_endpoint_metrics', toDateTime64(0, 3, 'UTC'), now64(6))
