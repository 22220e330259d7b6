-- The values the filters offer: environments, releases and browsers of the project's page loads in the window.
SELECT 'environment' AS dim, toString(environment) AS value, count() AS loads
FROM transactions
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')} AND op = 'pageload'
  AND environment != ''
GROUP BY value
UNION ALL
SELECT 'release' AS dim, toString(release) AS value, count() AS loads
FROM transactions
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')} AND op = 'pageload'
  AND release != ''
GROUP BY value
UNION ALL
SELECT 'browser' AS dim, toString(browser_name) AS value, count() AS loads
FROM transactions
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')} AND op = 'pageload'
  AND browser_name != ''
GROUP BY value
ORDER BY dim, loads DESC
LIMIT 300
