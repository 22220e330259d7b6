-- The values the filters offer: environments, releases and browsers of the project's page loads in the window
-- (`pageload_facts`), most page loads first. Read without FINAL: a not yet merged duplicate only changes the order.
SELECT dim, value, sum(loads) AS loads
FROM
(
    SELECT environment, release, browser, count() AS loads
    FROM pageload_facts
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
    GROUP BY environment, release, browser
)
ARRAY JOIN [('environment', toString(environment)), ('release', toString(release)), ('browser', toString(browser))]
    AS pair
WHERE pair.2 != ''
GROUP BY pair.1 AS dim, pair.2 AS value
ORDER BY dim, loads DESC
LIMIT 300
