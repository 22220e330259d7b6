-- Per project, the release of its newest page loads since {since} (the hour periods of `pageload_periods`, what
-- the page-load views read; every hour with page loads has its row, the current one included): the release a
-- performance alert names as the one it started in. Hours, not minutes: 60 times fewer rows for the same answer.
SELECT project_id, argMax(release, start)
FROM pageload_periods
WHERE project_id IN {project_ids:Array(UInt64)} AND grain = 'hour' AND start >= toStartOfHour({since:DateTime('UTC')})
GROUP BY project_id
