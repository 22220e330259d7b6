-- The next newer and next older event of one issue around (ts, event_id), for older / newer navigation.
SELECT
    (
        SELECT toString(event_id) AS id FROM events
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND fingerprint IN {fingerprints:Array(String)} AND issue_id = {issue_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp <= {until:DateTime64(3, 'UTC')}
          AND (timestamp, event_id) > ({ts:DateTime64(3, 'UTC')}, toUUIDOrZero({event_id:String}))
        ORDER BY timestamp ASC, event_id ASC LIMIT 1
    ) AS newer,
    (
        SELECT toString(event_id) AS id FROM events
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND fingerprint IN {fingerprints:Array(String)} AND issue_id = {issue_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp <= {until:DateTime64(3, 'UTC')}
          AND (timestamp, event_id) < ({ts:DateTime64(3, 'UTC')}, toUUIDOrZero({event_id:String}))
        ORDER BY timestamp DESC, event_id DESC LIMIT 1
    ) AS older
