-- One uptime window (uptime_pct) evaluated at many times in one read of the probes (`monitor_checks`): a
-- budget's daily history, a rule's preview (window_monitor_checks.sql's figures). Each point is (id, since,
-- until), its window's bounds in whole minutes; the pattern matches the monitor's slug.
SELECT point.1 AS point, count() AS samples, countIf(status = 'ok') AS ok
FROM monitor_checks
ARRAY JOIN arrayFilter(p -> timestamp >= p.2 AND timestamp < p.3,
                       {points:Array(Tuple(UInt16, DateTime('UTC'), DateTime('UTC')))}) AS point
WHERE project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime('UTC')} AND timestamp < {until:DateTime('UTC')}
  AND monitor_slug LIKE {pattern:String}
GROUP BY point
SETTINGS ${view_settings}
