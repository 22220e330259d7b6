-- Correction rows for issue_tags_daily: for each (issue, day, tag key, tag value) in {keys}, the events stored
-- with the pair but not counted ({missing}, same position).
INSERT INTO issue_tags_daily (org_id, project_id, tag_key, tag_value, day, issue_id, events)
SELECT
    any(org_id),
    project_id,
    toString(key) AS pair_key,
    value AS pair_value,
    toDate(timestamp) AS day,
    issue_id,
    arrayElement(
        {missing:Array(UInt64)},
        indexOf({keys:Array(Tuple(UInt64, UInt64, Date, String, String))}, (project_id, issue_id, day, pair_key, pair_value))
    )
FROM events
ARRAY JOIN mapKeys(tags) AS key, mapValues(tags) AS value
WHERE project_id IN {projects:Array(UInt64)} AND issue_id IN {issues:Array(UInt64)}
  AND (project_id, issue_id, toDate(timestamp), toString(key), value)
      IN {keys:Array(Tuple(UInt64, UInt64, Date, String, String))}
GROUP BY project_id, issue_id, day, pair_key, pair_value
