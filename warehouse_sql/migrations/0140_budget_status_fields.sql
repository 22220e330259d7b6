-- Budgets gained a statistic, a window and a minimum sample count; the mart records what it judged with and
-- the verdict in three states (pass / fail / insufficient_data: no data or fewer samples than the minimum),
-- and since when a failing budget has failed. `passed` is now 1 for a pass only.
ALTER TABLE budget_status
    ADD COLUMN IF NOT EXISTS statistic LowCardinality(String) DEFAULT 'p75' AFTER budget_value,
    ADD COLUMN IF NOT EXISTS min_samples UInt32 DEFAULT 20 AFTER window_days,
    ADD COLUMN IF NOT EXISTS samples UInt64 DEFAULT 0 AFTER current_value,
    ADD COLUMN IF NOT EXISTS status LowCardinality(String) DEFAULT 'insufficient_data' AFTER passed,
    ADD COLUMN IF NOT EXISTS failing_since Nullable(DateTime64(3, 'UTC')) AFTER status
