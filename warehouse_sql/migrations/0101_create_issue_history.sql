-- Issue workflow, append-only history: one row per status change, by a person or by the system
-- (regression, an ignore condition met). Never updated or deleted.
CREATE TABLE IF NOT EXISTS issue_history
(
    org_id               UInt64,
    project_id           UInt64,
    issue_id             UInt64,
    at                   DateTime64(6, 'UTC'),
    actor                String,                  -- user e-mail / "api:<key id>" / "system"
    from_status          LowCardinality(String),
    to_status            LowCardinality(String),
    reason               String,                  -- why the system changed it, '' for a person's change
    release              String DEFAULT '',
    ignore_until_events  UInt64 DEFAULT 0,
    ignore_until         Nullable(DateTime64(3, 'UTC'))
)
ENGINE = MergeTree
ORDER BY (project_id, issue_id, at)
