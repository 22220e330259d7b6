-- An anomaly rule's hourly buckets as the `anomaly_bands` asset last judged them (stacklens/anomalies/band_rows.py):
-- the rule page's "Last hours" table. The newest row of each hour (FINAL: a later run replaced it), newest first.
SELECT bucket, value, samples, expected, lower, upper, score, seasonality, firing
FROM anomaly_bands FINAL
WHERE org_id = {org_id:UInt64} AND rule_id = {rule_id:UInt64} AND bucket >= {since:DateTime('UTC')}
ORDER BY bucket DESC
LIMIT 48
