-- A page load's INP is its `inp` measurement, else the largest INP of the standalone interaction spans of its
-- trace (@sentry/browser 8+ reports INP as a `ui.interaction.*` span when the page is hidden; ingest stores each as
-- a transactions row of its own). Such a span can land in the hour after its page load's, so an interaction's
-- arrival marks its own hour and the hour before as received: the next tick refills the page load's facts.
DROP VIEW IF EXISTS raw_arrival_hours_transactions_mv;

CREATE MATERIALIZED VIEW IF NOT EXISTS raw_arrival_hours_transactions_mv TO raw_arrival_hours AS
SELECT 'transactions' AS source, project_id, hour, max(received_at) AS received
FROM transactions
ARRAY JOIN if(startsWith(op, 'ui.interaction'),
              [toStartOfHour(timestamp), toStartOfHour(timestamp) - INTERVAL 1 HOUR],
              [toStartOfHour(timestamp)]) AS hour
GROUP BY project_id, hour;

-- The facts fill again on the page-load step's next run: it starts over from the raw layer, joining the
-- interactions already stored to their page loads.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('pageload_facts', toDateTime64(0, 3, 'UTC'), now64(6))
