-- Check pageload_periods_add_up: the periods the run wrote whose histograms do not count exactly their measure's
-- page loads (load time all of them) and API calls, or that do not start on a multiple of their grain.
SELECT count() FROM pageload_periods
WHERE ${written_states}
  AND (arraySum(load_hist.2) != views OR arraySum(ttfb_hist.2) != ttfb_n
       OR arraySum(dom_hist.2) != dom_n OR arraySum(lcp_hist.2) != lcp_n
       OR arraySum(inp_hist.2) != inp_n OR arraySum(own_inp_hist.2) != own_inp_n
       OR arraySum(cls_hist.2) != cls_n
       OR arraySum(fcp_hist.2) != fcp_n OR arraySum(api_hist.2) != api_calls
       OR NOT (${period_aligned}))
