-- Rebuild `weekly_trends` for every ISO week with transactions received after {since}, and the week after it
-- (whose change is measured against it), by merging the hours' states of page_hour_states (kept by the
-- page_metrics asset; the caller reads only what those states already hold). p75 exact.
INSERT INTO weekly_trends
WITH
    weeks AS
    (
        SELECT DISTINCT arrayJoin([w, w + 7]) AS week FROM
        (
            SELECT DISTINCT toMonday(hour) AS w FROM raw_arrival_hours
            WHERE source = 'transactions' AND received > {since:DateTime64(3, 'UTC')}
        )
    ),
    per_week AS
    (
        SELECT max(org_id) AS org_id, project_id, page, toMonday(hour) AS week, sum(views) AS n_views,
               sum(load_n) AS loads, sum(load_sum) AS load_total,
               quantilesExactInclusiveMerge(0.5, 0.75, 0.95)(load_q)[2] AS load_p75
        FROM page_hour_states FINAL
        WHERE hour >= (SELECT min(week) - 7 FROM weeks) AND hour < (SELECT max(week) + 7 FROM weeks)
        GROUP BY project_id, page, week
        HAVING n_views > 0
    )
SELECT c.org_id, c.project_id, c.page, c.week, toISOYear(c.week), toISOWeek(c.week), c.n_views,
       if(c.loads = 0, 0, c.load_total / c.loads), if(c.loads = 0, 0, c.load_p75),
       if(p.loads = 0, NULL, p.load_p75),
       if(p.loads = 0 OR p.load_p75 = 0 OR c.loads = 0, NULL, 100 * (c.load_p75 - p.load_p75) / p.load_p75),
       {materialized_at:DateTime64(6, 'UTC')}
FROM per_week AS c
LEFT JOIN per_week AS p ON p.project_id = c.project_id AND p.page = c.page AND p.week = c.week - 7
WHERE c.week IN (SELECT week FROM weeks)
SETTINGS join_use_nulls = 0
