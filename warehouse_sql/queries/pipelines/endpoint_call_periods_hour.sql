-- Refresh the hours (grain 'hour') of `endpoint_call_periods` for the hours in [{start}, {end}) from
-- `endpoint_facts` (macro endpoint_call_periods_of_facts). The facts mark a page load's first call of the endpoint
-- and carry its calls of it (looked for from an hour before), so a load whose calls cross an hour boundary counts
-- once and its fan-out whole.
${endpoint_call_periods_of_facts(grain=hour)}
