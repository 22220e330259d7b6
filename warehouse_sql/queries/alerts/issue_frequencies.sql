-- Per project and issue, the events, distinct users and first release of many `event_frequency` rule groups in
-- one scan of `events` over the widest window [{since}, {until}) (projection events_by_time; stacklens/alerts/
-- issue_measures.py). {columns}: per group, countIf / uniqExactIf / argMinIf on the group's condition;
-- {hits}: the groups' `countIf(…) > 0` joined by OR. Both are composed from that module's constant fragments,
-- their values numbered server-side parameters.
SELECT project_id, issue_id, {columns}
FROM events
WHERE project_id IN {project_ids:Array(UInt64)} AND timestamp >= {since:DateTime64(3, 'UTC')}
  AND timestamp < {until:DateTime64(3, 'UTC')}
GROUP BY project_id, issue_id
HAVING {hits}
