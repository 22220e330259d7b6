-- The INP view's page loads per browser (stacklens/performance/inp/reads.py; filters as inp_parts.sql): page loads
-- and page loads with INP from the page-load states (macro pageload_window, as the page views count them); the
-- interactions per browser come from inp_parts.sql's browser rows. A browser that sends no INP or no script data
-- is named, never counted 0 ms.
-- Read with pread on the reading thread, as inp_parts.sql says why.
SELECT browser, sum(views) AS page_loads, sum(inp_n) AS inp_page_loads
FROM ${pageload_window}
GROUP BY browser
ORDER BY page_loads DESC, browser
SETTINGS local_filesystem_read_method = 'pread', ${view_settings}
