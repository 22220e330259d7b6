-- Correction rows for release_error_counts: for each (project, release) in {keys}, the error events stored but
-- not counted ({missing}, same position) and the release's first seen over its stored events.
INSERT INTO release_error_counts (org_id, project_id, release, events, first_seen)
SELECT
    any(org_id),
    project_id,
    toString(release) AS rel,
    arrayElement({missing:Array(UInt64)}, indexOf({keys:Array(Tuple(UInt64, String))}, (project_id, rel))),
    min(timestamp)
FROM events
WHERE project_id IN {projects:Array(UInt64)}
  AND (project_id, toString(release)) IN {keys:Array(Tuple(UInt64, String))}
GROUP BY project_id, rel
