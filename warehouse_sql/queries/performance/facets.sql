-- The values the filters offer: environments, releases and browsers of the project's page loads in the window
-- (macro pageload_window, called with no dimension set), most page loads first.
SELECT dim, value, sum(loads) AS loads
FROM
(
    SELECT environment, release, browser, sum(views) AS loads
    FROM ${pageload_window}
    GROUP BY environment, release, browser
)
ARRAY JOIN [('environment', toString(environment)), ('release', toString(release)), ('browser', toString(browser))]
    AS pair
WHERE pair.2 != ''
GROUP BY pair.1 AS dim, pair.2 AS value
ORDER BY dim, loads DESC
LIMIT 300
SETTINGS ${view_settings}
