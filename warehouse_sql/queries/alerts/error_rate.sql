-- Per project, the transactions in [{since}, {until}), those that failed (a status other than ok / cancelled /
-- unknown, or an HTTP status of 500 or more) and the newest release: an `error_rate` rule group's figure.
-- {filters}: the group's ` AND …` conditions (environment, release) from stacklens/alerts/issue_measures.py's
-- constant fragments, their values server-side parameters.
SELECT project_id, count() AS n,
       countIf(status NOT IN ('ok', 'cancelled', 'unknown', '') OR http_status >= 500) AS failed,
       argMax(toString(release), timestamp)
FROM transactions
WHERE project_id IN {project_ids:Array(UInt64)} AND timestamp >= {since:DateTime64(3, 'UTC')}
  AND timestamp < {until:DateTime64(3, 'UTC')} {filters}
GROUP BY project_id
