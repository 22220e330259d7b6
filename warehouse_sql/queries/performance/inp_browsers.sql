-- The INP view's coverage per browser (stacklens/performance/inp/reads.py; filters as inp_parts.sql): page loads
-- and page loads with INP from the page-load states (macro pageload_window, as the page views count them),
-- interactions, those with attribution (input delay, processing, presentation) and those with long-animation-frame
-- (script) data from `inp_interactions`. A browser that sends no INP or no script data is named, never counted 0 ms.
SELECT browser, sum(loads) AS page_loads, sum(inp_loads) AS inp_page_loads, sum(n) AS interactions,
       sum(attributed) AS attributed, sum(with_scripts) AS with_scripts
FROM
(
    SELECT browser, sum(views) AS loads, sum(inp_n) AS inp_loads, 0 AS n, 0 AS attributed, 0 AS with_scripts
    FROM ${pageload_window}
    GROUP BY browser
    UNION ALL
    SELECT browser, 0, 0, count(), count(input_delay), countIf(loaf = 1)
    FROM inp_interactions FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
    GROUP BY browser
)
GROUP BY browser
ORDER BY page_loads DESC, browser
SETTINGS ${view_settings}
