-- One row per interaction the browser reported as a standalone INP span (`ui.interaction.*` transactions rows,
-- stacklens/ingest/inp.py), with what the INP view and the INP metrics read (docs/performance.md, "INP causes"):
-- its page, dimensions, target (the element's selector) and type, INP, and — when the page's SDK measured them
-- (stacklens_sdk's browser INP attribution, Chromium) — its three parts (input delay, processing, presentation
-- delay; NULL without attribution) and the scripts of the long animation frames it overlapped: source URL, host,
-- function, invoker, duration, the part of the interaction it ran in, and whether it is a third party's (its
-- host is neither the page's nor one of the project's own hosts, projects.first_party_hosts, at the time the
-- row was written). `loaf` = 1 when the browser gave long-animation-frame data (an empty script list is then
-- "no script over 5 ms", not "unknown"). Written by the `inp_interactions` asset for the hours with new
-- transactions (queries/pipelines/inp_interactions.sql); a rewritten hour replaces its rows.
CREATE TABLE IF NOT EXISTS inp_interactions
(
    org_id           UInt64,
    project_id       UInt64,
    ts               DateTime64(3, 'UTC'),
    event_id         UUID,
    trace_id         String,
    page             LowCardinality(String),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    target           String,
    type             LowCardinality(String),
    inp              Float64,
    input_delay      Nullable(Float64),
    processing       Nullable(Float64),
    presentation     Nullable(Float64),
    loaf             UInt8,
    script_url       Array(String),
    script_host      Array(LowCardinality(String)),
    script_function  Array(String),
    script_invoker   Array(String),
    script_ms        Array(Float64),
    script_part      Array(LowCardinality(String)),
    script_third     Array(UInt8),
    first_party_ms   Float64,
    third_party_ms   Nullable(Float64),
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(ts)
ORDER BY (project_id, ts, event_id)
TTL toDateTime(ts) + INTERVAL ${retention_days} DAY;

-- The table fills on the asset's first run: it starts from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('inp_interactions', toDateTime64(0, 3, 'UTC'), now64(6))
