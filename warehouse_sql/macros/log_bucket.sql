-- A value's 1 % wide log bucket, as a lambda (`arrayMap(${log_bucket}, [value])`): round(ln(x) * 100) for x > 0,
-- whose value exp(bucket / 100) is within 0.5 % of its members at any scale (load times in ms and CLS, which is
-- unitless and mostly below 1, alike); -100000 holds 0; a negative x goes below it, -200000 - round(ln(-x) * 100),
-- so the buckets sort as their values. Read back by the hist_quantile macro.
x -> toInt32(multiIf(x > 0, round(log(x) * 100), x = 0, -100000, -200000 - round(log(-x) * 100)))
