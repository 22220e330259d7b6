-- The points of a series (macro series_periods) whose windows a period's row tiles: for a one-minute period those
-- of `minute_ranges` (point, hour, first minute, end) whose partial edge hour holds it; for an hour, a day or a
-- block of days its entry in `members` (the points of each period, aligned with `periods`). Used as
-- `ARRAY JOIN ${series_points} AS point` over the rows merged per (grain, start).
if(grain = 'minute',
   arrayMap(r -> r.1, arrayFilter(r -> r.2 = toStartOfHour(start) AND start >= r.3 AND start < r.4,
                                  {minute_ranges:Array(Tuple(UInt16, DateTime('UTC'), DateTime('UTC'), DateTime('UTC')))})),
   {members:Array(Array(UInt16))}[indexOf({periods:Array(Tuple(String, DateTime('UTC')))}, (toString(grain), start))])
