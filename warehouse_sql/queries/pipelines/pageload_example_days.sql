-- Refresh `pageload_example_days` for the UTC days holding the hours [{start}, {end}), by merging their hours'
-- examples in `pageload_example_hours` (refreshed just before by the same tick): per filter dimensions, page and
-- bucket the day's page load nearest the bucket's centre, then the smallest event id.
INSERT INTO pageload_example_days
SELECT org_id, project_id, day, environment, release, browser, page, bucket, example.1, example.2, example.3,
       example.4, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, toStartOfDay(hour) AS day, environment, release, browser, page, bucket,
           argMin((load_ms, event_id, ts, score),
                  (if(load_ms > 0, abs(log(load_ms) * 100 - bucket), 0.), event_id)) AS example
    FROM pageload_example_hours FINAL
    WHERE hour >= toStartOfDay({start:DateTime64(3, 'UTC')})
      AND hour < toStartOfDay({end:DateTime64(3, 'UTC')} - INTERVAL 1 MILLISECOND) + INTERVAL 1 DAY
    GROUP BY org_id, project_id, day, environment, release, browser, page, bucket
)
