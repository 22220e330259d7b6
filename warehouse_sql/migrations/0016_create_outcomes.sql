-- What became of every item that reached an entrance, as Sentry's outcomes count it (docs/architecture.md §5): one row
-- per organization, project, hour, category, outcome and reason after merges, `quantity` summed. Written by
-- the ingest tally (stacklens.outcomes.tally) in batches every few seconds, never once per request; SDK client
-- reports add what the SDKs dropped themselves under the reason they give. Read by GET /api/outcomes and the
-- organization's usage page, always with sum(quantity) (rows of one key may not be merged yet).
-- project_id 0: an item whose app key names no project of the organization.
CREATE TABLE IF NOT EXISTS outcomes
(
    org_id      UInt64,
    project_id  UInt64,
    hour        DateTime('UTC'),
    category    LowCardinality(String),  -- error | transaction | span | session | log | replay | attachment | client_report
    outcome     LowCardinality(String),  -- accepted | filtered | rate_limited | invalid | too_large | dropped
    reason      LowCardinality(String),  -- '' for accepted; a short code otherwise (docs/decisions.md)
    quantity    UInt64
)
ENGINE = SummingMergeTree(quantity)
PARTITION BY toYYYYMM(hour)
ORDER BY (org_id, hour, project_id, category, outcome, reason)
TTL hour + INTERVAL ${retention_days} DAY
