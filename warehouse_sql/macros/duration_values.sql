-- The values of the buckets of a load-time histogram `dur_hist` (buckets, counts: see resource_request_hours):
-- exp(bucket / 100), within 0.5 % of the bucket's members; -100000 holds 0 ms. Read by duration_p95.
arrayMap(k -> if(k = -100000, 0., exp(k / 100)), dur_hist.1)
