-- A state table's rows of the periods that tile one window evaluated at many points (series_pageloads.sql,
-- series_api_calls.sql; stacklens/performance/window_series.py): each point's window tiled as macro period_tiles
-- tiles one — `periods` (grain, start) holds the points' whole hours, days and blocks of days, `minute_hours` the
-- hours holding a point's partial edge, whose minutes are read — within [since, until), the span of all the
-- points' windows. Which points a period's row counts for: macro series_points. Used as `WHERE … AND
-- ${series_periods}`.
((grain, start) IN {periods:Array(Tuple(String, DateTime('UTC')))}
 OR (grain = 'minute' AND toStartOfHour(start) IN {minute_hours:Array(DateTime('UTC'))}))
AND start >= {since:DateTime('UTC')} AND start < {until:DateTime('UTC')}
