-- The page routes one project has transactions for: a budget scoped to a page must name one of them.
SELECT DISTINCT page
FROM transactions
WHERE project_id = {project:UInt64} AND page != ''
LIMIT 100000
