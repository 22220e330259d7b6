-- One failed-transactions window evaluated at many times in one read of the raw `transactions`
-- (window_failed_transactions.sql's figures: an `error_rate` rule's preview): each point is (id, since, until), its
-- window's bounds in whole minutes.
SELECT point.1 AS point, count() AS samples,
       countIf(status NOT IN ('ok', 'cancelled', 'unknown', '') OR http_status >= 500) AS failed
FROM transactions
ARRAY JOIN arrayFilter(p -> timestamp >= p.2 AND timestamp < p.3,
                       {points:Array(Tuple(UInt16, DateTime('UTC'), DateTime('UTC')))}) AS point
WHERE project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime('UTC')} AND timestamp < {until:DateTime('UTC')}
  AND page LIKE {pattern:String}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({browser:String} = '' OR browser_name = {browser:String})
GROUP BY point
SETTINGS ${view_settings}
