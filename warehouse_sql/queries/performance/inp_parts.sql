-- The INP view's interactions in one read (stacklens/performance/inp/reads.py): over the project's interactions in
-- [since, until) and the filters ('' = any; {page} a route or ''), three grouping sets —
--   per page (`element` and `kind` ''): interactions, those with attribution and with script data, INP p75 and the
--     p75 of its input delay, processing time, presentation delay and third-party script time (exact percentiles,
--     linear interpolation; NULL without samples, never 0), and the first- and third-party script time of the
--     interactions with script data and how many of them a third party's script ran in;
--   per page, target and type: the same counts and p75s;
--   per browser (`by_browser` 1, page ''): interactions, with attribution, with script data.
-- Read from `inp_interactions` (the asset of the same name).
SELECT page, if(grouping(target) = 0, target, '') AS element, if(grouping(target) = 0, type, '') AS kind,
       grouping(browser) = 0 AS by_browser, if(grouping(browser) = 0, browser, '') AS browser_name,
       count() AS interactions, count(input_delay) AS attributed, countIf(loaf = 1) AS with_scripts,
       quantileExactInclusive(0.75)(inp) AS inp_p75,
       quantileExactInclusive(0.75)(input_delay) AS input_delay_p75,
       quantileExactInclusive(0.75)(processing) AS processing_p75,
       quantileExactInclusive(0.75)(presentation) AS presentation_p75,
       quantileExactInclusive(0.75)(third_party_ms) AS third_party_p75,
       sumIf(first_party_ms, loaf = 1) AS first_ms, sumIf(assumeNotNull(third_party_ms), loaf = 1) AS third_ms,
       countIf(loaf = 1 AND ifNull(third_party_ms, 0) > 0) AS third_party_interactions
FROM inp_interactions FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({browser:String} = '' OR browser = {browser:String})
  AND ({page:String} = '' OR page = {page:String})
GROUP BY GROUPING SETS ((page), (page, target, type), (browser))
ORDER BY by_browser, page, element != '', interactions DESC, element
LIMIT 1000
SETTINGS do_not_merge_across_partitions_select_final = 1, ${view_settings}
