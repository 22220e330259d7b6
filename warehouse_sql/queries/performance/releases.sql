-- Per release seen in [since, until) and filters (release '' left out) — with page loads or with error events —
-- its first page load within the retention, page loads, load time (p75), JavaScript bytes per page load, API time
-- of browser calls (p95) and their error rate (`api_error_pct`, the catalog's: calls answered 400-599 over all
-- calls, as error_pct), error events and issues first seen in it; the load time and the API
-- time at a grid of levels around p75 and p95 (`load_levels`, `api_levels`: the confidence intervals of the two
-- percentiles are read from them, stacklens/releases/impact.py LOAD_LEVELS and API_LEVELS); ordered by first seen
-- so each release compares with the one before it.
-- The four reads (the window's page-load states, the first page loads, the error events, the new issues) are
-- each aggregated per release and stacked, then merged per release: one GROUP BY instead of four joins, which
-- the engine plans in ~20 ms instead of ~30 (bench/releases.py).
SELECT release,
       multiIf(fs_rows > 0, least(fs_first, if(views > 0, sp_first, fs_first)), views > 0, sp_first, first_error)
           AS first_seen,
       views, if(views > 0, load_grid[13], NULL) AS load_p75, load_grid AS load_levels,
       if(views > 0, js_bytes / views, NULL) AS js_bytes_per_view, api_calls,
       if(api_calls > 0, api_grid[12], NULL) AS api_p95, api_grid AS api_levels,
       if(api_calls > 0, 100 * api_errors / api_calls, NULL) AS api_error_pct,
       error_events, new_issues
FROM
(
    SELECT release, sum(sp_rows) AS sp_rows, minIf(first, part = 'sp') AS sp_first, sum(views) AS views,
           max(load_grid) AS load_grid, sum(js_bytes) AS js_bytes, sum(api_calls) AS api_calls,
           max(api_grid) AS api_grid, sum(api_errors) AS api_errors,
           sum(fs_rows) AS fs_rows, minIf(first, part = 'fs') AS fs_first,
           sum(error_events) AS error_events, minIf(first, part = 'ev') AS first_error, sum(new_issues) AS new_issues
    FROM
    (
        -- Per release, from the page loads of the window and filters (macro pageload_window; percentiles from
        -- the merged 1 % log histograms): first page load, page loads, load time p75, JavaScript bytes and the
        -- API calls the loads made (durations, failures).
        SELECT 'sp' AS part, toString(release) AS release, toUInt64(1) AS sp_rows, min(first_ts) AS first,
               sum(views) AS views,
               quantilesExactWeightedInterpolatedArray(0.5, 0.6, 0.65, 0.68, 0.7, 0.71, 0.72, 0.73, 0.735, 0.74, 0.745, 0.7475, 0.75, 0.7525, 0.755, 0.76, 0.765, 0.77, 0.78, 0.79, 0.8, 0.82, 0.85, 0.9, 1.0)(load_hist.1, load_hist.2)
                   AS load_grid,
               sum(js_bytes) AS js_bytes, sum(api_calls) AS api_calls,
               quantilesExactWeightedInterpolatedArray(0.8, 0.85, 0.88, 0.9, 0.91, 0.92, 0.93, 0.935, 0.94, 0.945, 0.9475, 0.95, 0.9525, 0.955, 0.96, 0.965, 0.97, 0.975, 0.98, 0.985, 0.99, 0.995, 1.0)(api_hist.1, api_hist.2)
                   AS api_grid,
               sum(api_errors) AS api_errors, toUInt64(0) AS fs_rows, toUInt64(0) AS error_events,
               toUInt64(0) AS new_issues
        FROM ${pageload_window}
        WHERE release != ''
        GROUP BY release
        UNION ALL
        -- Each release's first page load within the retention, whatever the window (the day rows: every day with
        -- page loads has one), so a window does not reorder releases that began before it.
        SELECT 'fs', toString(release), 0, min(first_ts), 0, [], 0, 0, [], 0, 1, 0, 0
        FROM pageload_periods
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day' AND release != ''
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser = {browser:String})
        GROUP BY release
        UNION ALL
        SELECT 'ev', toString(release), 0, min(timestamp), 0, [], 0, 0, [], 0, 0, count(), 0
        FROM events
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND release != '' AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
        GROUP BY release
        UNION ALL
        -- Issues first seen in each release (the issues mart; environment and browser do not apply).
        SELECT 'ni', first_release, 0, toDateTime64(0, 3, 'UTC'), 0, [], 0, 0, [], 0, 0, 0, count()
        FROM issues FINAL
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND first_release != ''
          AND ({release:String} = '' OR first_release = {release:String})
        GROUP BY first_release
    )
    GROUP BY release
    -- The releases with page loads or error events in the window.
    HAVING sp_rows > 0 OR error_events > 0
)
ORDER BY first_seen, release
LIMIT 200
SETTINGS ${view_settings}
