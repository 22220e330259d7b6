-- Raw spans of transactions: resources, API calls (http.client), browser phases, db, ...
CREATE TABLE IF NOT EXISTS spans
(
    org_id                   UInt64,
    project_id               UInt64,
    transaction_event_id     UUID,
    trace_id                 String,
    span_id                  String,
    parent_span_id           String,
    timestamp                DateTime64(3, 'UTC'),   -- start
    duration_ms              Float64,
    received_at              DateTime64(3, 'UTC'),
    op                       LowCardinality(String), -- resource.script | resource.css | resource.img | http.client | browser | ...
    description              String,
    status                   LowCardinality(String),
    status_code              UInt16,                 -- HTTP status for http.client spans, else 0
    http_method              LowCardinality(String),
    transaction              String,
    transaction_op           LowCardinality(String),
    page                     String,                 -- the parent transaction's normalised route
    release                  LowCardinality(String),
    environment              LowCardinality(String),
    service                  LowCardinality(String),
    response_content_length  Nullable(Int64),        -- http.response_content_length (encoded bytes)
    decoded_content_length   Nullable(Int64),        -- http.decoded_response_content_length
    transfer_size            Nullable(Int64),        -- http.response_transfer_size
    render_blocking_status   LowCardinality(String), -- resource.render_blocking_status: blocking | non-blocking | ''
    data                     Map(String, String)
)
ENGINE = ReplacingMergeTree(received_at)
PARTITION BY toYYYYMM(timestamp)
ORDER BY (project_id, timestamp, transaction_event_id, span_id)
TTL toDateTime(timestamp) + INTERVAL ${retention_days} DAY
-- Keeps the last 10,000 insert blocks' hashes, so an insert retried with the same
-- insert_deduplication_token (per batch and table) lands once even without replication.
SETTINGS non_replicated_deduplication_window = 10000
