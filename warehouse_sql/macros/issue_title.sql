-- An issue's title over its issue_live_counters rows (GROUP BY project_id, issue_id), by the one rule
-- (stacklens/metrics/issue_figures.py): the latest of its own events' title (own_name, migration 0270: events
-- whose fingerprint gives this issue by itself, so a merge's survivor keeps its name), else its latest event's.
if(argMaxMerge(own_name).1 != '', argMaxMerge(own_name).1, argMaxMerge(latest_title))
