-- The services that logged in the window (the service filter's choices), busiest first.
SELECT service, count() AS records
FROM logs
WHERE org_id = {org_id:UInt64}
  AND project_id = {project_id:UInt64}
  AND timestamp >= {since:DateTime64(6, 'UTC')}
  AND timestamp < {until:DateTime64(6, 'UTC')}
  AND service != ''
GROUP BY service
ORDER BY records DESC, service
LIMIT 100
