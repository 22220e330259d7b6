-- Feeds issue_elements from every insert into `events`.
CREATE MATERIALIZED VIEW IF NOT EXISTS issue_elements_mv TO issue_elements AS
SELECT org_id, project_id, e.1 AS reason, e.2 AS element, issue_id
FROM events
ARRAY JOIN arrayFilter(
    x -> x.2 != '',
    arrayConcat(
        [('same_user', user_key),
         ('same_time_window', toString(toStartOfFiveMinutes(timestamp))),
         ('same_release', toString(release))],
        arrayMap(f -> ('similar_stack', f), arrayDistinct(in_app_frames))
    )
) AS e
