-- Distribution of each metric of the page loads of the window and filters (`pageload_facts`): counts per
-- log-scale bucket (10 per decade; bucket b holds values in [10^(b/10), 10^((b+1)/10))), and CLS in steps of 0.01.
SELECT metric, bucket, count() AS loads
FROM
(
    SELECT arrayJoin([('load', toNullable(load_ms)), ('ttfb', ttfb), ('lcp', lcp), ('fcp', fcp), ('inp', inp),
                      ('cls', cls)]) AS v,
           v.1 AS metric, assumeNotNull(v.2) AS value,
           if(metric = 'cls', toInt32(floor(value * 100)), toInt32(floor(log10(greatest(value, 1)) * 10))) AS bucket
    FROM pageload_facts FINAL
    WHERE ${pageload_filter}
      AND v.2 IS NOT NULL
)
GROUP BY metric, bucket
ORDER BY metric, bucket
