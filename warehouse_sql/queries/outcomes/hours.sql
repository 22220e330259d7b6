-- Outcomes of one organization per hour, project, category, outcome and reason (GET /api/outcomes, the usage
-- page). sum(): rows of one key are added up here whether or not the SummingMergeTree has merged them.
-- {project_id} 0 = every project; {category} '' = every category.
SELECT
    hour,
    project_id,
    category,
    outcome,
    reason,
    sum(quantity) AS quantity
FROM outcomes
WHERE org_id = {org_id:UInt64}
  AND hour >= toStartOfHour({since:DateTime64(3, 'UTC')})
  AND hour < {until:DateTime64(3, 'UTC')}
  AND ({project_id:UInt64} = 0 OR project_id = {project_id:UInt64})
  AND ({category:String} = '' OR category = {category:String})
GROUP BY hour, project_id, category, outcome, reason
HAVING quantity > 0
ORDER BY hour, project_id, category, outcome, reason
