-- The INP view's first- against third-party time per page (stacklens/performance/inp/reads.py; filters as
-- inp_parts.sql), over the interactions with long-animation-frame data (`loaf`; the others are counted apart):
-- the scripts' time of the page's own hosts and of third parties (ms), the interactions a third-party script ran
-- in.
SELECT page, count() AS interactions, countIf(loaf = 1) AS with_scripts,
       sumIf(first_party_ms, loaf = 1) AS first_ms, sumIf(assumeNotNull(third_party_ms), loaf = 1) AS third_ms,
       countIf(loaf = 1 AND ifNull(third_party_ms, 0) > 0) AS third_party_interactions
FROM inp_interactions FINAL
WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
  AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
  AND ({environment:String} = '' OR environment = {environment:String})
  AND ({release:String} = '' OR release = {release:String})
  AND ({browser:String} = '' OR browser = {browser:String})
  AND ({page:String} = '' OR page = {page:String})
GROUP BY page
ORDER BY third_ms + first_ms DESC, page
LIMIT 200
SETTINGS ${view_settings}
