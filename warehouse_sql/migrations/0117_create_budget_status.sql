-- Mart `budget_status` — grain: one row per budget (control-store id), evaluated over the last 7 days.
-- Rows of budgets deleted from the control store are removed on the next run.
CREATE TABLE IF NOT EXISTS budget_status
(
    org_id           UInt64,
    project_id       UInt64,
    budget_id        UInt64,
    metric           LowCardinality(String),
    scope            String,
    budget_value     Float64,
    current_value    Nullable(Float64),   -- NULL: no data in the window
    passed           UInt8,               -- 1 when current_value <= budget_value or no data
    window_days      UInt16,
    evaluated_at     DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(evaluated_at)
ORDER BY (project_id, budget_id)
