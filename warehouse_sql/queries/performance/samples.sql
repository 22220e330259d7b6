-- Sample page loads of the window and filters (`pageload_facts`): the 3 fastest, the 3 nearest the median and the
-- 3 slowest by load time.
WITH
    loads AS
    (
        SELECT event_id, page, ts, load_ms, score FROM pageload_facts FINAL WHERE ${pageload_filter}
    ),
    med AS (SELECT quantileExactInclusive(0.5)(load_ms) AS v FROM loads)
SELECT * FROM
(
    SELECT 'fastest' AS kind, toString(event_id) AS event_id, page, ts, load_ms, score FROM loads
    ORDER BY load_ms ASC, event_id LIMIT 3
)
UNION ALL
SELECT * FROM
(
    SELECT 'median' AS kind, toString(event_id) AS event_id, page, ts, load_ms, score FROM loads
    ORDER BY abs(load_ms - (SELECT v FROM med)) ASC, event_id LIMIT 3
)
UNION ALL
SELECT * FROM
(
    SELECT 'slowest' AS kind, toString(event_id) AS event_id, page, ts, load_ms, score FROM loads
    ORDER BY load_ms DESC, event_id LIMIT 3
)
