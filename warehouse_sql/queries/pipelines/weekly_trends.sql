-- Rebuild `weekly_trends` for every ISO week with a page view received after {since}, and the week after it
-- (whose change is measured against it).
INSERT INTO weekly_trends
WITH
    weeks AS
    (
        SELECT DISTINCT arrayJoin([w, w + 7]) AS week FROM
        (
            SELECT DISTINCT toMonday(timestamp) AS w FROM transactions
            WHERE received_at > {since:DateTime64(3, 'UTC')} AND op IN ('pageload', 'navigation')
        )
    ),
    per_week AS
    (
        SELECT any(org_id) AS org_id, project_id, page, toMonday(timestamp) AS week,
               uniqExact(event_id) AS views,
               avgIf(duration_ms, op = 'pageload') AS load_avg,
               quantileExactInclusiveIf(0.75)(duration_ms, op = 'pageload') AS load_p75,
               countIf(op = 'pageload') AS loads
        FROM transactions
        WHERE timestamp >= (SELECT min(week) - 7 FROM weeks) AND timestamp < (SELECT max(week) + 7 FROM weeks)
          AND op IN ('pageload', 'navigation')
        GROUP BY project_id, page, week
    )
SELECT c.org_id, c.project_id, c.page, c.week, toISOYear(c.week), toISOWeek(c.week), c.views,
       if(c.loads = 0, 0, c.load_avg), if(c.loads = 0, 0, c.load_p75),
       if(p.loads = 0, NULL, p.load_p75),
       if(p.loads = 0 OR p.load_p75 = 0 OR c.loads = 0, NULL, 100 * (c.load_p75 - p.load_p75) / p.load_p75),
       {materialized_at:DateTime64(6, 'UTC')}
FROM per_week AS c
LEFT JOIN per_week AS p ON p.project_id = c.project_id AND p.page = c.page AND p.week = c.week - 7
WHERE c.week IN (SELECT week FROM weeks)
SETTINGS join_use_nulls = 0
