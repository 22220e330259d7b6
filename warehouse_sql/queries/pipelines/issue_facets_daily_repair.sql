-- Correction rows for issue_facets_daily: for each (issue, day, environment, release, level, service) in
-- {keys}, the events stored but not counted ({missing}, same position) with the users' state and first / last
-- seen of all its stored events.
INSERT INTO issue_facets_daily (org_id, project_id, day, issue_id, environment, release, level, service, events,
                                users, first_seen, last_seen)
SELECT
    any(org_id),
    project_id,
    toDate(timestamp) AS day,
    issue_id,
    toString(environment) AS env,
    toString(release) AS rel,
    toString(level) AS lvl,
    toString(service) AS svc,
    arrayElement(
        {missing:Array(UInt64)},
        indexOf({keys:Array(Tuple(UInt64, UInt64, Date, String, String, String, String))},
                (project_id, issue_id, day, env, rel, lvl, svc))
    ),
    uniqState(nullIf(user_key, '')),
    min(timestamp),
    max(timestamp)
FROM events
WHERE project_id IN {projects:Array(UInt64)} AND issue_id IN {issues:Array(UInt64)}
  AND (project_id, issue_id, toDate(timestamp), toString(environment), toString(release), toString(level),
       toString(service)) IN {keys:Array(Tuple(UInt64, UInt64, Date, String, String, String, String))}
GROUP BY project_id, issue_id, day, env, rel, lvl, svc
