-- Many windows of the INP part metrics (inp_input_delay_ms, inp_processing_ms, inp_presentation_ms,
-- inp_third_party_ms) in one read of `inp_interactions`, for budgets, alert rules and their previews
-- (stacklens/performance/window_values.py), as the INP view reads them (queries/performance/inp_parts.sql: each
-- value as the INP states' 1 % log histograms keep it, macro inp_hist_value, and the same interpolating
-- weighted percentile, over the interactions that have the value; the sum is exact). Each target is (id, page
-- pattern, since, until, environment, release, browser, part code): part 1 input delay, 2 processing, 3
-- presentation delay, 4 third-party script time (NULL without long-animation-frame data: not a sample).
SELECT target, count(value) AS samples, sum(value) AS total,
       quantilesExactWeightedInterpolated(0.5, 0.75, 0.9, 0.95, 0.99)(bucket, 1) AS quantiles
FROM
(
    SELECT request.1 AS target,
           multiIf(request.8 = 1, input_delay, request.8 = 2, processing, request.8 = 3, presentation,
                   third_party_ms) AS value,
           ${inp_hist_value(v=value)} AS bucket
    FROM inp_interactions FINAL
    ARRAY JOIN arrayFilter(x -> page LIKE x.2 AND ts >= x.3 AND ts < x.4 AND (x.5 = '' OR environment = x.5)
                                AND (x.6 = '' OR release = x.6) AND (x.7 = '' OR browser = x.7),
                           {targets:Array(Array(Tuple(UInt32, String, DateTime('UTC'), DateTime('UTC'), String, String, String, UInt8)))}[indexOf({project_ids:Array(UInt64)}, project_id)])
               AS request
    WHERE project_id IN {project_ids:Array(UInt64)}
      AND ts >= {since:DateTime('UTC')} AND ts < {until:DateTime('UTC')}
)
WHERE value IS NOT NULL
GROUP BY target
SETTINGS ${view_settings}
