-- Each budget's latest evaluation in the `budget_status` mart (written every 5 minutes by the budgets asset):
-- the definition it was judged with, its value, samples, status and failing-since, and when.
SELECT budget_id,
       argMax(tuple(metric, scope, budget_value, statistic, window_days, min_samples, current_value, samples, status,
                    failing_since), evaluated_at),
       max(evaluated_at)
FROM budget_status
WHERE project_id = {project:UInt64} AND budget_id IN {ids:Array(UInt64)}
GROUP BY budget_id
