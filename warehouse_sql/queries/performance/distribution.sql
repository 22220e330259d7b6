-- Distribution of each metric of the page loads of the window and filters (macro pageload_window, its `dist`
-- counts: exact): page loads per log-scale bucket (10 per decade; bucket b holds values in
-- [10^(b/10), 10^((b+1)/10))), and CLS in steps of 0.01.
SELECT ['load', 'ttfb', 'lcp', 'fcp', 'inp', 'cls'][intDiv(key + 2147483648, 4294967296)] AS metric,
       toInt32(key - intDiv(key + 2147483648, 4294967296) * 4294967296) AS bucket, sum(n) AS loads
FROM
(
    SELECT sumMap(dist.1, dist.2) AS merged
    FROM ${pageload_window}
)
ARRAY JOIN merged.1 AS key, merged.2 AS n
GROUP BY metric, bucket
ORDER BY metric, bucket
SETTINGS ${view_settings}
