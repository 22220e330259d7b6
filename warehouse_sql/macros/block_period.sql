-- The block of `s` days (macro days_of_blocks) holding a day period: its grain ('days_2' … 'days_16') and its
-- start, a multiple of `s` days since 1970-01-01, so blocks of one length never overlap and a window's whole
-- days are a few aligned blocks (ViewFilters.periods). Aliased `block_grain` and `block`: `grain` and `start` are
-- the day's own columns, which the WHERE reads.
concat('days_', toString(s)) AS block_grain, toDateTime(toDate(intDiv(toUInt32(toDate(start)), s) * s), 'UTC') AS block
