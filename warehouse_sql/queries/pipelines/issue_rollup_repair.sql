-- issue_rollup fed again from the rows of the dead landing attempts ({dead}): the view's own aggregation over
-- them. Every column is a state or a min / max / set, so feeding rows the view already fed changes nothing.
INSERT INTO issue_rollup (org_id, project_id, issue_id, fingerprint, grouping_version, title, culprit, level,
                          platform, exception_type, first_seen, last_seen, first_release, last_release, releases,
                          environments, services)
SELECT
    any(org_id), project_id, issue_id, any(fingerprint),
    argMaxState(toString(grouping_version), timestamp),
    argMaxState(title, timestamp),
    argMaxState(if(culprit != '', culprit, in_app_frames[1]), timestamp),
    argMaxState(toString(level), timestamp),
    argMaxState(toString(platform), timestamp),
    argMaxState(exception_type, timestamp),
    min(timestamp), max(timestamp),
    min(if(release != '', (timestamp, toString(release)), (toDateTime64('2299-12-31 00:00:00', 3, 'UTC'), ''))),
    max(if(release != '', (timestamp, toString(release)), (toDateTime64(0, 3, 'UTC'), ''))),
    groupUniqArrayArray(if(release != '', [toString(release)], [])),
    groupUniqArrayArray(if(environment != '', [toString(environment)], [])),
    groupUniqArrayArray(if(service != '', [toString(service)], []))
FROM events
WHERE received_at > {since:DateTime64(3, 'UTC')} AND received_at <= {until:DateTime64(3, 'UTC')}
  AND (org_id, batch_id, received_at) IN {dead:Array(Tuple(UInt64, String, DateTime64(3, 'UTC')))}
GROUP BY project_id, issue_id
