-- Check pageload_facts_valid: among the page loads the run wrote, those with more failed API calls than calls, a
-- call without its duration, or a score outside 0–100 (none is a pass).
SELECT count() FROM pageload_facts
WHERE ${written_facts}
  AND (api_errors > api_calls OR length(api_ms) != api_calls OR score < 0 OR score > 100.000001)
