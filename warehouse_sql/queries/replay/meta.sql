-- What the replay events of one replay say about it (urls, user, browser, error ids), merged over segments.
SELECT
    groupUniqArrayArray(urls) AS urls,
    groupUniqArrayArray(error_ids) AS error_ids,
    argMax(multiIf(user_email != '', user_email, user_name != '', user_name, user_id != '', user_id, user_ip), segment_id) AS user_label,
    argMaxIf(user_id, segment_id, user_id != '') AS given_id,
    argMaxIf(user_email, segment_id, user_email != '') AS given_email,
    argMaxIf(user_name, segment_id, user_name != '') AS given_name,
    argMax(browser_name, segment_id) AS browser,
    argMax(browser_version, segment_id) AS browser_version,
    argMax(os_name, segment_id) AS os_name,
    argMax(environment, segment_id) AS environment,
    argMax(release, segment_id) AS release,
    argMin(replay_type, segment_id) AS replay_type,
    count() AS replay_events
FROM replays FINAL
WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64} AND replay_id = {replay_id:UUID}
