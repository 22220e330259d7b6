-- Records per time bucket and severity for the logs view's chart (the search's filters, no paging). Buckets
-- start at multiples of `bucket_seconds` since the epoch; empty buckets are absent (the chart draws gaps).
SELECT
    toStartOfInterval(timestamp, toIntervalSecond({bucket_seconds:UInt32})) AS bucket,
    severity,
    count() AS records
FROM logs
WHERE ${log_filter}
GROUP BY bucket, severity
ORDER BY bucket, severity
