-- Check resource_request_periods_add_up: the periods the run wrote where a request is not blocking, non-blocking
-- or unknown exactly once, the load-time histogram misses a request, page loads exceed requests, or the period
-- does not start on a multiple of its grain.
SELECT count() FROM resource_request_periods
WHERE ${written_states}
  AND (blocking + non_blocking + unknown != requests OR arraySum(dur_hist.2) != requests
       OR loads > requests OR type_loads > requests OR NOT (${period_aligned}))
