-- The INP view's subparts (stacklens/performance/inp/reads.py): per page (`element` and `kind` '') and per page,
-- target and type, over the project's interactions in [since, until) and the filters ('' = any; {page} a route or
-- ''): interactions, those with attribution, INP p75 and the p75 of its input delay, processing time,
-- presentation delay and third-party script time (exact percentiles, linear interpolation; NULL without samples,
-- never 0). Read from `inp_interactions` (the asset of the same name).
SELECT page, if(grouping(target) = 0, target, '') AS element, if(grouping(target) = 0, type, '') AS kind,
       count() AS interactions, count(input_delay) AS attributed, countIf(loaf = 1) AS with_scripts,
       quantileExactInclusive(0.75)(inp) AS inp_p75,
       quantileExactInclusive(0.75)(input_delay) AS input_delay_p75,
       quantileExactInclusive(0.75)(processing) AS processing_p75,
       quantileExactInclusive(0.75)(presentation) AS presentation_p75,
       quantileExactInclusive(0.75)(third_party_ms) AS third_party_p75
FROM inp_interactions FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({browser:String} = '' OR browser = {browser:String})
  AND ({page:String} = '' OR page = {page:String})
GROUP BY GROUPING SETS ((page), (page, target, type))
ORDER BY page, element != '', interactions DESC, element
LIMIT 500
SETTINGS ${view_settings}
