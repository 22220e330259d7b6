-- Per page and day (UTC) of the window and filters (macro pageload_window): the p75 load time of the merged 1 %
-- log histograms, as daily.sql computes it (the pages table's sparklines).
SELECT page AS key, day, quantileExactWeightedInterpolatedArray(0.75)(load_hist.1, load_hist.2) AS load_p75
FROM ${pageload_window}
GROUP BY key, day
ORDER BY key, day
LIMIT 50000
SETTINGS ${view_settings}
