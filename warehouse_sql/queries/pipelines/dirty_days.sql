-- Days (UTC, of the rows' own timestamps) with rows received after {since} in the raw tables a job reads, from
-- raw_arrival_hours (kept at insert time): no pass over the raw tables' received_at.
SELECT DISTINCT toDate(hour) AS day FROM raw_arrival_hours
WHERE has({tables:Array(String)}, toString(source)) AND received > {since:DateTime64(3, 'UTC')}
ORDER BY day
