-- Check pageload_examples_in_their_period: the examples the run wrote that lie outside their period or their
-- load-time bucket.
SELECT count() FROM pageload_examples
WHERE ${written_examples}
  AND (ts < start OR ts >= start + toIntervalMinute(CAST(grain, 'UInt16'))
       OR bucket != if(load_ms > 0, toInt32(round(log(load_ms) * 100)), toInt32(-1000000)))
