-- Check endpoint_call_periods_add_up: the periods the run wrote whose status classes exceed the calls, whose
-- duration histogram misses a call, whose page loads exceed the calls, or that do not start on a multiple of their
-- grain.
SELECT count() FROM endpoint_call_periods
WHERE ${written_states}
  AND (s2xx + s3xx + s4xx + s5xx + no_status > calls OR arraySum(dur_hist.2) != calls
       OR loads > calls OR NOT (${period_aligned}))
