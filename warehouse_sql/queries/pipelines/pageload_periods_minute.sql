-- Refresh the minutes (grain 'minute') of `pageload_periods` in [{start}, {end}) from `pageload_facts` (refreshed
-- just before by the same tick): per minute, filter dimensions and page, what pageload_periods_hour.sql keeps per
-- hour (the page loads' state rows merged, the 3 fastest and 3 slowest page loads). The page-load views read them
-- for the partial hours at their window's edges (macro pageload_window), so a window is one read of the periods
-- that tile it; the days and blocks are merged from the hours, never from these.
INSERT INTO pageload_periods
SELECT org_id, project_id, 'minute' AS grain, toStartOfMinute(first_ts) AS minute, environment, release, browser,
       page, ${pageload_merge},
       groupArraySorted(3)(load_row),
       arrayMap(x -> (-x.1, x.2, x.3, x.4), groupArraySorted(3)((-load_row.1, load_row.2, load_row.3, load_row.4))),
       {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, environment, release, browser, page,
           ${pageload_state_row},
           (load_ms, toString(event_id), ts, score) AS load_row
    FROM pageload_facts FINAL
    WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
)
GROUP BY org_id, project_id, minute, environment, release, browser, page
