-- What a regroup puts in place of `events` in a materialized view's SELECT: the stored events of the issues
-- that lost or gained fingerprints, so the view's own aggregation runs over them alone.
FROM (
    SELECT * FROM events
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND issue_id IN {issue_ids:Array(UInt64)}
) AS events
