-- Check endpoint_facts_per_load: the calls the run wrote that do not count at least themselves among their page
-- load's calls of the endpoint.
SELECT count() FROM endpoint_facts
WHERE ${written_facts} AND per_load = 0
