-- Per candidate issue of `new_issue` rules that filter on environment, release, level or tag: its events since
-- {since} matching each such group ({columns}: a countIf per group on its condition, composed from
-- stacklens/alerts/issue_measures.py's constant fragments). Only the candidates' events are read (bloom-filter
-- index on issue_id).
SELECT project_id, issue_id, {columns}
FROM events
WHERE project_id IN {project_ids:Array(UInt64)} AND issue_id IN {issue_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')}
GROUP BY project_id, issue_id
