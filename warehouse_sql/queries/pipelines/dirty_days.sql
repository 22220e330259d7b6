-- Days (UTC, of the event timestamp) with rows received after {since} in the raw tables a job reads.
SELECT DISTINCT day FROM
(
    SELECT toDate(timestamp) AS day FROM events
    WHERE has({tables:Array(String)}, 'events') AND received_at > {since:DateTime64(3, 'UTC')}
    UNION ALL
    SELECT toDate(timestamp) AS day FROM transactions
    WHERE has({tables:Array(String)}, 'transactions') AND received_at > {since:DateTime64(3, 'UTC')}
    UNION ALL
    SELECT toDate(timestamp) AS day FROM spans
    WHERE has({tables:Array(String)}, 'spans') AND received_at > {since:DateTime64(3, 'UTC')}
)
ORDER BY day
