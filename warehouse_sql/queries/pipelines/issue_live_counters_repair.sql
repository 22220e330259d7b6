-- Correction rows for issue_live_counters: for each issue in {keys}, the events the comparison found stored but
-- not counted ({missing}, same position), with the aggregate states of all the issue's stored events (users,
-- first and last seen, latest title …). Merging a state again changes nothing, so the states restore what a
-- lost block held without counting anything twice; only `events` is a sum, and it adds exactly the shortfall.
INSERT INTO issue_live_counters (org_id, project_id, issue_id, events, users, first_seen, last_seen,
                                 last_received, title, culprit, level, platform, last_release,
                                 latest_title, own_name)
SELECT
    any(org_id),
    project_id,
    issue_id,
    arrayElement({missing:Array(UInt64)}, indexOf({keys:Array(Tuple(UInt64, UInt64))}, (project_id, issue_id))),
    uniqExactStateIf(user_key, user_key != ''),
    min(timestamp),
    max(timestamp),
    max(received_at),
    argMaxState(title, received_at),
    argMaxState(culprit, received_at),
    argMaxState(toString(level), received_at),
    argMaxState(toString(platform), received_at),
    argMaxState(toString(release), received_at),
    argMaxState(title, (timestamp, event_id)),
    argMaxStateIf(
        (title, if(culprit != '', culprit, in_app_frames[1])),
        (timestamp, event_id),
        issue_id = bitShiftRight(reinterpretAsUInt64(reverse(substring(
            SHA256(concat(toString(project_id), ':', fingerprint)), 1, 8))), 12)
    )
FROM events
WHERE project_id IN {projects:Array(UInt64)} AND issue_id IN {issues:Array(UInt64)}
  AND (project_id, issue_id) IN {keys:Array(Tuple(UInt64, UInt64))}
GROUP BY project_id, issue_id
