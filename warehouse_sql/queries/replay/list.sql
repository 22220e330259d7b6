-- Replays of one project, newest first: duration from the segments, pages / user / browser from the replay
-- events (a replay whose events never came still lists, without them), errors from the replay events'
-- error ids or the errors tagged with the replay's id, whichever knows more.
SELECT
    replace(toString(s.replay_id), '-', '') AS replay_id,
    s.started AS started,
    s.ended AS ended,
    dateDiff('millisecond', s.started, s.ended) AS duration_ms,
    s.segments AS segments,
    s.size_bytes AS size_bytes,
    r.urls AS urls,
    length(r.urls) AS pages,
    greatest(length(r.error_ids), ifNull(e.errors, 0)) AS errors,
    r.user_label AS user_label,
    r.browser AS browser,
    r.browser_version AS browser_version,
    r.os_name AS os_name,
    r.environment AS environment,
    r.release AS release,
    r.replay_type AS replay_type
FROM
(
    SELECT replay_id, min(timestamp) AS started, max(end_timestamp) AS ended, count() AS segments,
           sum(size_bytes) AS size_bytes
    FROM replay_segments FINAL
    WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64} AND timestamp >= {since:DateTime64(3)}
    GROUP BY replay_id
) AS s
LEFT JOIN
(
    SELECT replay_id,
           groupUniqArrayArray(urls) AS urls,
           groupUniqArrayArray(error_ids) AS error_ids,
           argMax(multiIf(user_email != '', user_email, user_name != '', user_name, user_id != '', user_id, user_ip), segment_id) AS user_label,
           argMax(browser_name, segment_id) AS browser,
           argMax(browser_version, segment_id) AS browser_version,
           argMax(os_name, segment_id) AS os_name,
           argMax(environment, segment_id) AS environment,
           argMax(release, segment_id) AS release,
           argMin(replay_type, segment_id) AS replay_type
    FROM replays FINAL
    WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64}
      AND timestamp >= {since:DateTime64(3)} - INTERVAL 1 DAY
    GROUP BY replay_id
) AS r ON r.replay_id = s.replay_id
LEFT JOIN
(
    SELECT tags['replayId'] AS replay_hex, uniqExact(event_id) AS errors
    FROM events
    WHERE org_id = {org_id:UInt64} AND project_id = {project_id:UInt64}
      AND timestamp >= {since:DateTime64(3)} - INTERVAL 1 DAY AND tags['replayId'] != ''
    GROUP BY replay_hex
) AS e ON e.replay_hex = replace(toString(s.replay_id), '-', '')
WHERE ({browser:String} = '' OR r.browser = {browser:String})
  AND ({user:String} = '' OR positionCaseInsensitiveUTF8(r.user_label, {user:String}) > 0)
  AND ({url:String} = '' OR arrayExists(u -> positionCaseInsensitiveUTF8(u, {url:String}) > 0, r.urls))
  AND ({errors_only:UInt8} = 0 OR greatest(length(r.error_ids), ifNull(e.errors, 0)) > 0)
  AND duration_ms >= {min_duration_ms:UInt64}
  AND ({release:String} = '' OR r.release = {release:String})
ORDER BY s.started DESC
LIMIT {limit:UInt32}
