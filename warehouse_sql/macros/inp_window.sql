-- The INP state rows (page, target, type, browser, the counts, the five histograms and the script time of macro
-- inp_state_row; not its sums, which no reader of the window takes) of the window [since, until) and filters
-- (environment, release, browser, page; '' = any): its whole days (`inp_periods` grain 'day', [day_start,
-- day_end)) and its other whole hours (grain 'hour', [whole_start, whole_end)), and its partial edge hours — among
-- them the freshest, not yet a whole hour — from the interactions themselves (`inp_interactions`), one row per
-- page, target, type and browser (ViewFilters.whole_hours). An edge row's histograms hold one entry of weight 1 per
-- interaction with the value (the bucket stored with it, migration 0280; groupArray skips NULL: no sample, never
-- 0 ms), unmerged: the histograms' readers add weights per value (quantileExactWeightedInterpolated), so the
-- answer is that of one state row per interaction, from ~140 rows instead of ~5,000 (bench/RESULTS.md, "INP").
-- Used as `FROM ${inp_window}`.
(
    SELECT page, target, type, browser, interactions, attributed, with_scripts, inp_hist, input_delay_hist,
           processing_hist, presentation_hist, third_party_hist, first_ms, third_ms, third_interactions
    FROM inp_periods FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ((grain = 'day' AND start >= {day_start:DateTime('UTC')} AND start < {day_end:DateTime('UTC')})
           OR (grain = 'hour' AND start >= {whole_start:DateTime('UTC')} AND start < {day_start:DateTime('UTC')})
           OR (grain = 'hour' AND start >= {day_end:DateTime('UTC')} AND start < {whole_end:DateTime('UTC')}))
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
    UNION ALL
    SELECT page, target, type, browser, count() AS interactions, countIf(input_delay IS NOT NULL) AS attributed,
           countIf(loaf = 1) AS with_scripts,
           (groupArray(inp_bucket) AS inp_v, arrayWithConstant(length(inp_v), toUInt32(1))) AS inp_hist,
           (groupArray(input_delay_bucket) AS input_delay_v,
            arrayWithConstant(length(input_delay_v), toUInt32(1))) AS input_delay_hist,
           (groupArray(processing_bucket) AS processing_v,
            arrayWithConstant(length(processing_v), toUInt32(1))) AS processing_hist,
           (groupArray(presentation_bucket) AS presentation_v,
            arrayWithConstant(length(presentation_v), toUInt32(1))) AS presentation_hist,
           (groupArray(third_party_bucket) AS third_party_v,
            arrayWithConstant(length(third_party_v), toUInt32(1))) AS third_party_hist,
           sumIf(first_party_ms, loaf = 1) AS first_ms, sumIf(ifNull(third_party_ms, 0), loaf = 1) AS third_ms,
           countIf(loaf = 1 AND ifNull(third_party_ms, 0) > 0) AS third_interactions
    FROM inp_interactions FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
      AND NOT (ts >= {whole_start:DateTime64(3, 'UTC')} AND ts < {whole_end:DateTime64(3, 'UTC')})
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
    GROUP BY page, target, type, browser
)
