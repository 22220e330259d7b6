-- Mart `issues` — grain: one row per (project_id, issue_id), i.e. per project and fingerprint.
-- Rebuilt by the `issues` asset for every issue that got events since its last run (newest
-- materialized_at wins; read with FINAL). Live figures and status: the `issue_list` view.
CREATE TABLE IF NOT EXISTS issues
(
    org_id            UInt64,
    project_id        UInt64,
    issue_id          UInt64,
    fingerprint       String,
    grouping_version  LowCardinality(String),
    title             String,
    culprit           String,                      -- top in-app frame of the latest event
    level             LowCardinality(String),
    platform          LowCardinality(String),
    exception_type    String,
    first_seen        DateTime64(3, 'UTC'),
    last_seen         DateTime64(3, 'UTC'),
    last_received     DateTime64(3, 'UTC'),
    events            UInt64,
    users_affected    UInt64,
    first_release     String,
    last_release      String,
    releases          Array(String),
    environments      Array(String),
    services          Array(String),
    status            LowCardinality(String),      -- workflow status when materialized (live: issue_state)
    materialized_at   DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
ORDER BY (project_id, issue_id)
