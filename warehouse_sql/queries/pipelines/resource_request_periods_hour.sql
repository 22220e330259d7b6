-- Refresh the hours (grain 'hour') of `resource_request_periods` for the hours in [{start}, {end}) from
-- `resource_facts` (macro resource_request_periods_of_facts). The facts mark a page load's first request of a
-- resource or type (looked for from an hour before), so a load whose requests cross an hour boundary counts once.
${resource_request_periods_of_facts(grain=hour)}
