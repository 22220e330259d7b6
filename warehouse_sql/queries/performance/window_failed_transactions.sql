-- Many failed-transactions windows (metric failed_transactions_pct) in one read of the raw `transactions` (no
-- state keeps a transaction's status), for the previews of `error_rate` alert rules
-- (stacklens/performance/window_values.py). Each target is (id, page pattern, since, until, environment, release,
-- browser): its window's bounds in whole minutes, as every window is cut (ViewFilters). Failed: a status other
-- than ok, cancelled or unknown, or an HTTP status >= 500 (what queries/alerts/error_rate.sql counts).
SELECT request.1 AS target, count() AS samples,
       countIf(status NOT IN ('ok', 'cancelled', 'unknown', '') OR http_status >= 500) AS failed
FROM transactions
ARRAY JOIN arrayFilter(x -> page LIKE x.2 AND timestamp >= x.3 AND timestamp < x.4 AND (x.5 = '' OR environment = x.5)
                            AND (x.6 = '' OR release = x.6) AND (x.7 = '' OR browser_name = x.7),
                       {targets:Array(Array(Tuple(UInt32, String, DateTime('UTC'), DateTime('UTC'), String, String, String)))}[indexOf({project_ids:Array(UInt64)}, project_id)])
           AS request
WHERE project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime('UTC')} AND timestamp < {until:DateTime('UTC')}
GROUP BY target
SETTINGS ${view_settings}
