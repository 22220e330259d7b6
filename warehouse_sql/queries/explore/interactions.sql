-- Explore's `interactions` dataset (stacklens/explore/datasets.py): one row per interaction the browsers reported
-- with INP (`inp_interactions`, migration 0240) of the organization's projects in the window [since, until).
-- Columns: ts, uid (none: ''), tags (none), f_<field> per field of the dataset, m_<metric> per INP part metric
-- (NULL without attribution, or without script data for the third parties' time: not a sample, never 0); a
-- count of rows is the `inp_interactions` metric. `h_<metric>`: the value as the INP states keep it (macro
-- inp_hist_value, the expression of `inp_periods`' histograms; NULL with the value): Explore's percentiles are
-- taken over it with the views' function, so they equal the INP view's, the budgets' and the alerts' figures.
SELECT *,
       ${inp_hist_value(v=m_inp_input_delay_ms)} AS h_inp_input_delay_ms,
       ${inp_hist_value(v=m_inp_processing_ms)} AS h_inp_processing_ms,
       ${inp_hist_value(v=m_inp_presentation_ms)} AS h_inp_presentation_ms,
       ${inp_hist_value(v=m_inp_third_party_ms)} AS h_inp_third_party_ms
FROM
(
SELECT ts, '' AS uid, map() AS tags,
       environment AS f_environment, release AS f_release, browser AS f_browser, page AS f_page,
       target AS f_target, type AS f_type,
       input_delay AS m_inp_input_delay_ms, processing AS m_inp_processing_ms,
       presentation AS m_inp_presentation_ms, third_party_ms AS m_inp_third_party_ms
FROM inp_interactions FINAL
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND ts >= {since:DateTime64(3, 'UTC')} AND ts < {until:DateTime64(3, 'UTC')}
)
