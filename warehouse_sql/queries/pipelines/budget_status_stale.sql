-- The rows of `budget_status` of budgets no longer in the control store (deleted): the budgets run removes them
-- only when there are some (budget_status_stale_delete.sql is a mutation over every part even when it matches
-- nothing).
SELECT count() FROM budget_status WHERE NOT has({ids:Array(UInt64)}, budget_id)
