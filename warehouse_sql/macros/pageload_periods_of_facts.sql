-- Refresh the periods of grain `${grain}` ('minute' or 'hour') of `pageload_periods` in [{start}, {end}) from
-- `pageload_facts` (refreshed just before by the same tick): per period, filter dimensions and page, the page
-- loads' state rows (macro pageload_state_row) merged, and the period's 3 fastest and 3 slowest page loads (load
-- time, event id, start, score; by load time, then event id — the slowest stored slowest first). The one statement
-- of queries/pipelines/pageload_periods_minute.sql and pageload_periods_hour.sql, so the two grains cannot drift.
INSERT INTO pageload_periods
SELECT org_id, project_id, '${grain}' AS grain, toStartOfInterval(first_ts, INTERVAL 1 ${grain}) AS ${grain},
       environment, release, browser, page, ${pageload_merge},
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
GROUP BY org_id, project_id, ${grain}, environment, release, browser, page
