-- Per release seen in [since, until) and filters (release '' left out) — with page loads or with error events —
-- its first page load within the retention, page loads, load time (p75), JavaScript bytes per page load, API time
-- of browser calls (p95) and its error share, error events and issues first seen in it; the load time and the API
-- time at a grid of levels around p75 and p95 (`load_levels`, `api_levels`: the confidence intervals of the two
-- percentiles are read from them, stacklens/releases/impact.py LOAD_LEVELS and API_LEVELS); ordered by first seen
-- so each release compares with the one before it.
WITH
    sp AS
    (
        -- Per release, from the page loads of the window and filters (macro pageload_window; percentiles from
        -- the merged 1 % log histograms): first page load, page loads, load time p75, JavaScript bytes and the
        -- API calls the loads made (durations, failures).
        SELECT toString(release) AS release, min(first_ts) AS first_seen, sum(views) AS views,
               quantilesExactWeightedInterpolatedArray(0.5, 0.6, 0.65, 0.68, 0.7, 0.71, 0.72, 0.73, 0.735, 0.74, 0.745, 0.7475, 0.75, 0.7525, 0.755, 0.76, 0.765, 0.77, 0.78, 0.79, 0.8, 0.82, 0.85, 0.9, 1.0)(load_hist.1, load_hist.2)
                   AS load_grid,
               sum(js_bytes) AS js_bytes, sum(api_calls) AS api_calls,
               quantilesExactWeightedInterpolatedArray(0.8, 0.85, 0.88, 0.9, 0.91, 0.92, 0.93, 0.935, 0.94, 0.945, 0.9475, 0.95, 0.9525, 0.955, 0.96, 0.965, 0.97, 0.975, 0.98, 0.985, 0.99, 0.995, 1.0)(api_hist.1, api_hist.2)
                   AS api_grid,
               sum(api_errors) AS api_errors
        FROM ${pageload_window}
        WHERE release != ''
        GROUP BY release
    ),
    fs AS
    (
        -- Each release's first page load within the retention, whatever the window (the day rows: every day with
        -- page loads has one), so a window does not reorder releases that began before it.
        SELECT toString(release) AS release, min(first_ts) AS first_seen
        FROM pageload_periods
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND grain = 'day' AND release != ''
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser = {browser:String})
        GROUP BY release
    ),
    ev AS
    (
        SELECT toString(release) AS release, count() AS error_events, min(timestamp) AS first_error
        FROM events
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
          AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
          AND release != '' AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
        GROUP BY release
    ),
    ni AS
    (
        -- Issues first seen in each release (the issues mart; environment and browser do not apply).
        SELECT first_release AS release, count() AS new_issues
        FROM issues FINAL
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND first_release != ''
          AND ({release:String} = '' OR first_release = {release:String})
        GROUP BY first_release
    ),
    names AS
    (
        SELECT release FROM sp
        UNION DISTINCT
        SELECT release FROM ev
    )
SELECT names.release AS release,
       multiIf(fs.release != '', least(fs.first_seen, if(sp.views > 0, sp.first_seen, fs.first_seen)),
               sp.views > 0, sp.first_seen, ev.first_error) AS first_seen,
       sp.views AS views, if(sp.views > 0, sp.load_grid[13], NULL) AS load_p75, sp.load_grid AS load_levels,
       if(sp.views > 0, sp.js_bytes / sp.views, NULL) AS js_bytes_per_view, sp.api_calls AS api_calls,
       if(sp.api_calls > 0, sp.api_grid[12], NULL) AS api_p95, sp.api_grid AS api_levels,
       if(sp.api_calls > 0, 100 * sp.api_errors / sp.api_calls, NULL) AS api_error_pct,
       ev.error_events AS error_events, ni.new_issues AS new_issues
FROM names
LEFT JOIN sp ON sp.release = names.release
LEFT JOIN fs ON fs.release = names.release
LEFT JOIN ev ON ev.release = names.release
LEFT JOIN ni ON ni.release = names.release
ORDER BY first_seen, release
LIMIT 200
SETTINGS join_use_nulls = 0, ${view_settings}
