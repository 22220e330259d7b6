-- A request's 1 % log bucket of `duration_ms`: round(ln(duration_ms) * 100) as an Int32 (neighbouring buckets 1 %
-- apart), -100000 for 0 ms (or less). The key of the `dur_hist` histograms of `endpoint_call_periods` and
-- `resource_request_periods` (macros endpoint_call_states and resource_request_states) and of Explore's API calls
-- and resource requests (queries/explore/api_calls.sql, resources.sql), which read it as duration_hist_value does.
toInt32(if(duration_ms > 0, round(log(duration_ms) * 100), -100000))
