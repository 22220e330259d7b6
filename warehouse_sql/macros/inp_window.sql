-- The INP state rows (macro inp_state_row's columns after page, target, type, browser) of the window [since,
-- until) and filters (environment, release, browser, page; '' = any): its whole days (`inp_periods` grain 'day',
-- [day_start, day_end)) and its other whole hours (grain 'hour', [whole_start, whole_end)), and its partial edge
-- hours — among them the freshest, not yet a whole hour — from the interactions themselves (`inp_interactions`)
-- as state rows, so both count the same way (ViewFilters.whole_hours). Used as `FROM ${inp_window}`.
(
    SELECT page, target, type, browser, interactions, attributed, with_scripts, inp_sum, input_delay_sum,
           processing_sum, presentation_sum, third_party_sum, inp_hist, input_delay_hist, processing_hist,
           presentation_hist, third_party_hist, first_ms, third_ms, third_interactions
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
    SELECT page, target, type, browser, ${inp_state_row}
    FROM inp_interactions FINAL
    WHERE project_id = {project_id:UInt64} AND org_id = {org_id:UInt64}
      AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
      AND NOT (ts >= {whole_start:DateTime64(3, 'UTC')} AND ts < {whole_end:DateTime64(3, 'UTC')})
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
      AND ({page:String} = '' OR page = {page:String})
)
