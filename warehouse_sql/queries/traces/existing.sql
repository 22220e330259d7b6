-- Which of these trace ids have a span in the organization (a transaction is the root of every stored span,
-- so its table answers), for the "View trace" links of an event, a log record and a replay. The trace id skip
-- index finds them.
SELECT DISTINCT trace_id
FROM transactions
WHERE org_id = {org_id:UInt64} AND trace_id IN {trace_ids:Array(String)}
SETTINGS ${view_settings}
