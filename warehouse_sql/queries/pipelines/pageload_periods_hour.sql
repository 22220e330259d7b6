-- Refresh the hours (grain 'hour') of `pageload_periods` in [{start}, {end}) from `pageload_facts`: per hour,
-- filter dimensions and page, the merged state rows and the 3 fastest and 3 slowest page loads (macro
-- pageload_periods_of_facts); the days merge them.
${pageload_periods_of_facts(grain=hour)}
