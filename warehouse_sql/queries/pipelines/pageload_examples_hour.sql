-- Refresh the hourly examples (grain 'hour') of `pageload_examples` for the hours in [{start}, {end}) from
-- `pageload_facts` (refreshed just before by the same tick): per hour, filter dimensions, page and 1 % load-time
-- bucket (macro pageload_bucket) the page load nearest the bucket's centre, then the smallest event id.
INSERT INTO pageload_examples
SELECT org_id, project_id, 'hour', hour, environment, release, browser, page, bucket, example.1, example.2,
       example.3, example.4, {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, toStartOfHour(ts) AS hour, environment, release, browser, page,
           ${pageload_bucket} AS bucket,
           argMin((load_ms, toString(event_id), ts, score),
                  (if(load_ms > 0, abs(log(load_ms) * 100 - bucket), 0.), toString(event_id))) AS example
    FROM pageload_facts FINAL
    WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
    GROUP BY org_id, project_id, hour, environment, release, browser, page, bucket
)
