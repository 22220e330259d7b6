-- The issues that regressed since {since} (`issue_history`), with the time and release of their latest
-- regression and their title: a `regression` rule's notifications and its preview. {filters}: the rule's
-- ` AND h.release = …` condition from stacklens/alerts/issue_measures.py's constant fragments, or nothing.
SELECT h.project_id, h.issue_id, max(h.at), argMax(h.release, h.at), any(c.title)
FROM issue_history AS h
LEFT JOIN (SELECT project_id, issue_id, ${issue_title} AS title FROM issue_live_counters
           WHERE project_id IN {project_ids:Array(UInt64)} GROUP BY project_id, issue_id) AS c
  ON c.project_id = h.project_id AND c.issue_id = h.issue_id
WHERE h.project_id IN {project_ids:Array(UInt64)} AND h.to_status = 'regressed'
  AND h.at >= {since:DateTime64(3, 'UTC')} {filters}
GROUP BY h.project_id, h.issue_id
