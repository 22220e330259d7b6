-- Refresh the minutes (grain 'minute') of `pageload_periods` in [{start}, {end}) from `pageload_facts`: what
-- pageload_periods_hour.sql keeps per hour, per minute (macro pageload_periods_of_facts). The page-load views read
-- them for the partial hours at their window's edges (macro pageload_window), so a window is one read of the
-- periods that tile it; the days and blocks are merged from the hours, never from these.
${pageload_periods_of_facts(grain=minute)}
