-- A page load's 1 % load-time bucket: round(ln(load_ms) * 100), the bucket `load_hist` rounds the value to
-- (migration 0138); -1000000 for a load time of 0 (or less). Neighbouring buckets are 1 % apart.
if(load_ms > 0, toInt32(round(log(load_ms) * 100)), toInt32(-1000000))
