-- What the trace search shows of each trace found: its start and length, span count, services (project,
-- service name, whether a browser SDK's), root transaction and failed spans, over every project of the
-- organization. The trace id skip indexes (migration 0230) find the rows; the window, a day around the
-- traces' matching spans (stacklens.traces.search), bounds the parts.
SELECT trace_id,
       min(toUnixTimestamp64Milli(timestamp)) AS start_ms,
       max(toFloat64(toUnixTimestamp64Milli(timestamp)) + duration_ms) AS end_ms,
       count() AS spans,
       groupUniqArray(tuple(project_id, service, browser)) AS services,
       argMinIf(name, timestamp, is_tx = 1) AS root_name,
       argMinIf(op, timestamp, is_tx = 1) AS root_op,
       countIf(failed) AS failed_spans,
       groupUniqArrayIf(release, release != '') AS releases
FROM (
    SELECT trace_id, timestamp, duration_ms, project_id, toString(service) AS service, transaction AS name,
           toString(op) AS op, toUInt8(1) AS is_tx, toString(release) AS release,
           status NOT IN ('', 'ok', 'unset', 'unknown') OR http_status >= 500 AS failed,
           toUInt8(platform = 'javascript') AS browser
    FROM transactions
    WHERE org_id = {org_id:UInt64} AND trace_id IN {trace_ids:Array(String)}
      AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 DAY
      AND timestamp < {until:DateTime64(3, 'UTC')} + INTERVAL 1 DAY
    UNION ALL
    SELECT trace_id, timestamp, duration_ms, project_id, toString(service), description, toString(op),
           toUInt8(0), toString(release), status NOT IN ('', 'ok', 'unset', 'unknown') OR status_code >= 500,
           toUInt8(transaction_op IN ('pageload', 'navigation'))
    FROM spans
    WHERE org_id = {org_id:UInt64} AND trace_id IN {trace_ids:Array(String)}
      AND timestamp >= {since:DateTime64(3, 'UTC')} - INTERVAL 1 DAY
      AND timestamp < {until:DateTime64(3, 'UTC')} + INTERVAL 1 DAY
)
GROUP BY trace_id
SETTINGS ${view_settings}
