-- A state table's rows of the periods that tile the window [since, until): `periods` (grain, start) from
-- ViewFilters.periods with minutes — the minutes (grain 'minute') of the window's partial edge hours, its other
-- whole hours ('hour') and its whole days, as aligned blocks of days ('days_2' … 'days_16', else 'day') — which
-- tile the window exactly, a window being whole minutes: one read of one table (docs/decisions.md, "Windows in
-- whole minutes"). `periods` alone decides which rows count; the bounds on `start` narrow the read to the window.
-- Used as `WHERE … AND ${period_tiles}` by the window macros and window_states.sql; a series of windows reads
-- its periods with the macro series_periods.
(grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))}
AND start >= {since:DateTime('UTC')} AND start < {until:DateTime('UTC')}
