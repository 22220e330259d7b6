-- Issue workflow, current state: one row per issue, the newest `version` wins (read with FINAL or argMax).
-- An issue with no row here is `unresolved`. Changes go through stacklens.issues.workflow only, which also
-- appends to issue_history. Readers join this table live, so a status change shows at once.
CREATE TABLE IF NOT EXISTS issue_state
(
    org_id                  UInt64,
    project_id              UInt64,
    issue_id                UInt64,
    status                  LowCardinality(String),  -- unresolved | resolved | resolved_next_release | ignored | regressed
    ignore_until_events     UInt64 DEFAULT 0,        -- ignored: back to unresolved after this many more events (0 = no condition)
    ignore_events_baseline  UInt64 DEFAULT 0,        -- the issue's event count when it was ignored
    ignore_until            Nullable(DateTime64(3, 'UTC')),  -- ignored: back to unresolved at this time
    resolved_release        String DEFAULT '',       -- resolved_next_release: the release the fix is NOT in
    changed_at              DateTime64(6, 'UTC'),
    changed_by              String,
    version                 UInt64                   -- nanoseconds since the epoch of the change
)
ENGINE = ReplacingMergeTree(version)
ORDER BY (project_id, issue_id)
