-- Check inp_interactions_add_up: among the interactions the run wrote, those whose script arrays differ in
-- length, or whose first- and third-party times do not add up to the time of their scripts (none is a pass).
SELECT count() FROM inp_interactions
WHERE ${written_facts}
  AND (length(script_ms) != length(script_url) OR length(script_third) != length(script_url)
       OR length(script_part) != length(script_url)
       OR abs(first_party_ms + ifNull(third_party_ms, 0) - arraySum(script_ms)) > 0.001 * (1 + arraySum(script_ms)))
