-- Per project of one raw table: rows kept, the oldest row's time, and rows received in the last 7 days (the
-- growth rate `stacklens status --storage` projects the disk with).
SELECT
    project_id,
    count() AS rows,
    min({time:Identifier}) AS oldest,
    countIf({received:Identifier} >= now() - INTERVAL 7 DAY) AS recent_rows
FROM {table:Identifier}
GROUP BY project_id
