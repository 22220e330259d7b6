-- The median samples of a page in the window and filters: the 3 page loads nearest {median} (the window's median
-- from the merged load-time histogram, samples.sql / page_detail.sql; then by event id) among the examples of the
-- 1 % load-time buckets within 3 of the median's (`pageload_examples`, read by its sort key page, bucket — a few
-- granules, in one read): one page load per bucket of each whole day and of each other hour the window touches,
-- an edge hour's when that page load lies in the window. The median's bucket holds an example from every state with
-- a page load in it, so with enough page loads the 3 lie within 0.5 % of the median; the neighbouring buckets (up
-- to 3 %) serve a window with few. The cost follows the window's days, not its page loads.
WITH if({median:Float64} > 0, toInt32(round(log({median:Float64}) * 100)), toInt32(-1000000)) AS median_bucket
SELECT near.2 AS event_id, near.3 AS ts, near.1 AS load_ms, near.4 AS score
FROM
(
    SELECT arraySlice(arraySort(x -> (abs(x.1 - {median:Float64}), x.2),
                                groupArray((load_ms, event_id, ts, score))), 1, 3) AS nearest
    FROM pageload_examples FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64} AND page = {page:String}
      AND bucket >= median_bucket - 3 AND bucket <= median_bucket + 3
      AND ((grain = 'day' AND start >= {day_start:DateTime64(3, 'UTC')} AND start < {day_end:DateTime64(3, 'UTC')})
           OR (grain = 'hour' AND start >= toStartOfHour({since:DateTime64(3, 'UTC')})
               AND start < {until:DateTime64(3, 'UTC')}
               AND (start < {day_start:DateTime64(3, 'UTC')} OR start >= {day_end:DateTime64(3, 'UTC')})))
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
)
ARRAY JOIN nearest AS near
SETTINGS ${view_settings}
