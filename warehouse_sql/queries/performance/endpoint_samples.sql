-- The 5 slowest calls of one endpoint (source, method, parameterised path) in [since, until) and filters
-- (`endpoint_facts`), with the page load or server transaction they belong to (its waterfall).
SELECT toString(tx) AS event_id, ts, duration_ms, status_code, description
FROM endpoint_facts FINAL
WHERE ${pageload_filter}
  AND source = {endpoint_source:String} AND method = {endpoint_method:String} AND path = {endpoint_path:String}
ORDER BY duration_ms DESC, event_id
LIMIT 5
