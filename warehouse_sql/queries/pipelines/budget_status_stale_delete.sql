-- Remove the rows of `budget_status` of budgets no longer in the control store (deleted), so they disappear from
-- the mart; run as the deployment runs in-place changes (pipelines/resources.py, in_place).
DELETE FROM budget_status WHERE NOT has({ids:Array(UInt64)}, budget_id)
