-- Sample page loads of the window and filters (one page): the 3 fastest and the 3 slowest by load time (ties by
-- event id), exact, merged from the states' own 3 fastest and slowest (macro pageload_window: whole days and hours
-- and the partial edge hours' page loads); and the 3 page loads nearest the median of the merged load-time
-- histogram (within 0.5 % of the exact median) among the examples of the 1 % buckets around it: one page load per
-- bucket of each whole day and hour (`pageload_example_days` / `pageload_example_hours`, read by their sort key
-- page, bucket) and every page load of the edge hours in those buckets. The median's bucket holds an example of
-- every state that has a page load in it, so with enough page loads the 3 lie within 0.5 % of that median; the
-- neighbouring buckets (up to 3 %) serve a window with few. The cost follows the window's days and buckets, not its
-- page loads.
WITH
    (
        SELECT (groupArraySortedArray(3)(fastest),
                groupArraySortedArray(3)(arrayMap(x -> (-x.1, x.2, x.3, x.4), slowest)),
                quantileExactWeightedInterpolatedArray(0.5)(load_hist.1, load_hist.2))
        FROM ${pageload_window}
    ) AS merged,
    merged.3 AS median,
    if(median > 0, toInt32(round(log(median) * 100)), toInt32(-1000000)) AS median_bucket
SELECT picked.1 AS kind, picked.2.2 AS event_id, {page:String} AS page, picked.2.3 AS ts, picked.2.1 AS load_ms,
       picked.2.4 AS score
FROM
(
    SELECT arraySlice(arraySort(x -> (abs(x.1 - median), x.2), groupArray((load_ms, event_id, ts, score))), 1, 3)
               AS nearest
    FROM
    (
        SELECT load_ms, event_id, ts, score
        FROM pageload_example_days FINAL
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND page = {page:String}
          AND bucket >= median_bucket - 3 AND bucket <= median_bucket + 3
          AND day >= {day_start:DateTime64(3, 'UTC')} AND day < {day_end:DateTime64(3, 'UTC')}
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser = {browser:String})
        UNION ALL
        SELECT load_ms, event_id, ts, score
        FROM pageload_example_hours FINAL
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND page = {page:String}
          AND bucket >= median_bucket - 3 AND bucket <= median_bucket + 3
          AND hour >= {whole_start:DateTime64(3, 'UTC')} AND hour < {whole_end:DateTime64(3, 'UTC')}
          AND (hour < {day_start:DateTime64(3, 'UTC')} OR hour >= {day_end:DateTime64(3, 'UTC')})
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser = {browser:String})
        UNION ALL
        SELECT load_ms, toString(event_id) AS event_id, ts, score
        FROM pageload_facts FINAL
        WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND page = {page:String}
          AND ((ts >= {since:DateTime64(3, 'UTC')} AND ts < {whole_start:DateTime64(3, 'UTC')})
               OR (ts >= {whole_end:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}))
          AND ${pageload_bucket} >= median_bucket - 3 AND ${pageload_bucket} <= median_bucket + 3
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({browser:String} = '' OR browser = {browser:String})
    )
)
ARRAY JOIN
    arrayConcat(
        arrayMap(l -> ('fastest', l), merged.1),
        arrayMap(l -> ('median', l), nearest),
        arrayMap(l -> ('slowest', (-l.1, l.2, l.3, l.4)), merged.2)
    ) AS picked
