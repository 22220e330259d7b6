-- Refresh the minutes (grain 'minute') of `resource_request_periods` for the hours in [{start}, {end}) from
-- `resource_facts`: what resource_request_periods_hour.sql keeps per hour, per minute (macro
-- resource_request_periods_of_facts). The resources view reads them for the partial hours at its window's edges
-- (macro resource_window), so a window is one read of the periods that tile it; the days and blocks are merged
-- from the hours, never from these.
${resource_request_periods_of_facts(grain=minute)}
