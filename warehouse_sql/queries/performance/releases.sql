-- Per release seen in [since, until) and filters (release '' left out): first page load, page loads, load
-- time (p75), JavaScript bytes per page load, API time of browser calls (p95) and its error share,
-- error events and issues first seen in it; ordered by first seen so each release compares with the one before it.
WITH
    sp AS
    (
        -- Per release, from the page loads of the window and filters (macro pageload_window; percentiles from
        -- the merged 1 % log histograms): first page load, page loads, load time p75, JavaScript bytes and the
        -- API calls the loads made (durations, failures).
        SELECT toString(release) AS release, min(first_ts) AS first_seen, sum(views) AS views,
               quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75,
               sum(js_bytes) AS js_bytes, sum(api_calls) AS api_calls,
               quantileExactWeightedInterpolatedArray(0.95)(api_hist.1, api_hist.2) AS api_p95,
               sum(api_errors) AS api_errors
        FROM ${pageload_window}
        WHERE release != ''
        GROUP BY release
    ),
    ev AS
    (
        SELECT toString(release) AS release, count() AS error_events
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
    )
SELECT sp.release AS release, sp.first_seen AS first_seen, sp.views AS views, sp.load_p75 AS load_p75,
       sp.js_bytes / sp.views AS js_bytes_per_view, sp.api_calls AS api_calls,
       if(sp.api_calls > 0, sp.api_p95, NULL) AS api_p95,
       if(sp.api_calls > 0, 100 * sp.api_errors / sp.api_calls, NULL) AS api_error_pct,
       ev.error_events AS error_events, ni.new_issues AS new_issues
FROM sp
LEFT JOIN ev ON ev.release = sp.release
LEFT JOIN ni ON ni.release = sp.release
ORDER BY first_seen, release
LIMIT 200
SETTINGS join_use_nulls = 0, ${view_settings}
