-- One issue's live event count and latest release, from the insert-time counters (`issue_live_counters`): the
-- baseline an "ignore until N more events" counts from.
SELECT sum(events), argMaxMerge(last_release)
FROM issue_live_counters
WHERE project_id = {project_id:UInt64} AND issue_id = {issue_id:UInt64}
