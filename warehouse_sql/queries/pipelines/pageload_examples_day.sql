-- Refresh the daily examples (grain 'day') of `pageload_examples` for the UTC days holding the hours [{start},
-- {end}), by merging their hours' examples (refreshed just before by the same tick): per filter dimensions, page
-- and bucket the day's page load nearest the bucket's centre, then the smallest event id.
INSERT INTO pageload_examples
SELECT org_id, project_id, 'day', day, environment, release, browser, page, bucket, example.1, example.2, example.3,
       example.4, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, toStartOfDay(start) AS day, environment, release, browser, page, bucket,
           argMin((load_ms, event_id, ts, score),
                  (if(load_ms > 0, abs(log(load_ms) * 100 - bucket), 0.), event_id)) AS example
    FROM pageload_examples FINAL
    WHERE ${hours_of_days}
    GROUP BY org_id, project_id, day, environment, release, browser, page, bucket
)
