-- Check resource_facts_first_flags: among the requests the run wrote, a page load's first request of a type that
-- is not also its first request of that resource.
SELECT count() FROM resource_facts
WHERE ${written_facts} AND first_of_type = 1 AND first_of_resource = 0
