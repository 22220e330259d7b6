-- Refresh the minutes (grain 'minute') of `endpoint_call_periods` for the hours in [{start}, {end}) from
-- `endpoint_facts`: what endpoint_call_periods_hour.sql keeps per hour, per minute (macro
-- endpoint_call_periods_of_facts). The endpoint views read them for the partial hours at their window's edges
-- (macro endpoint_window), so a window is one read of the periods that tile it; the days and blocks are merged
-- from the hours, never from these.
${endpoint_call_periods_of_facts(grain=minute)}
