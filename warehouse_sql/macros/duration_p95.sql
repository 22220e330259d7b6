-- The p95 (linear interpolation between the ranks around 0.95 · (n − 1), as quantileExactInclusive and polars)
-- of a merged load-time histogram `hist` (sorted buckets, counts: see resource_request_hours), from the values
-- of its buckets: within 0.5 % of the exact p95. NULL without values.
if(arraySum(hist.2) = 0, NULL,
   if(hist.1[arrayFirstIndex(x -> x > floor((arraySum(hist.2) - 1) * 0.95), arrayCumSum(hist.2))] = -100000, 0.,
      exp(hist.1[arrayFirstIndex(x -> x > floor((arraySum(hist.2) - 1) * 0.95), arrayCumSum(hist.2))] / 100))
   + ((arraySum(hist.2) - 1) * 0.95 - floor((arraySum(hist.2) - 1) * 0.95))
   * (if(hist.1[arrayFirstIndex(x -> x > least(floor((arraySum(hist.2) - 1) * 0.95) + 1, toFloat64(arraySum(hist.2) - 1)),
                                arrayCumSum(hist.2))] = -100000, 0.,
         exp(hist.1[arrayFirstIndex(x -> x > least(floor((arraySum(hist.2) - 1) * 0.95) + 1, toFloat64(arraySum(hist.2) - 1)),
                                    arrayCumSum(hist.2))] / 100))
      - if(hist.1[arrayFirstIndex(x -> x > floor((arraySum(hist.2) - 1) * 0.95), arrayCumSum(hist.2))] = -100000, 0.,
           exp(hist.1[arrayFirstIndex(x -> x > floor((arraySum(hist.2) - 1) * 0.95), arrayCumSum(hist.2))] / 100))))
