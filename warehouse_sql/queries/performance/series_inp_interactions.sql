-- One INP part window (inp_input_delay_ms, inp_processing_ms, inp_presentation_ms, inp_third_party_ms) evaluated
-- at many times in one read of `inp_interactions` (window_inp_interactions.sql's figures, the INP view's
-- percentile: a budget's daily history, a rule's preview). Each point is (id, since, until), its window's bounds in
-- whole minutes; {part} the metric's code (1 input delay, 2 processing, 3 presentation delay, 4 third-party script
-- time).
SELECT point.1 AS point, count(value) AS samples, sum(value) AS total,
       quantilesExactWeightedInterpolated(0.5, 0.75, 0.9, 0.95, 0.99)(bucket, 1) AS quantiles
FROM
(
    SELECT ts, multiIf({part:UInt8} = 1, input_delay, {part:UInt8} = 2, processing, {part:UInt8} = 3, presentation,
                       third_party_ms) AS value,
           ${inp_hist_value(v=value)} AS bucket
    FROM inp_interactions FINAL
    WHERE project_id = {project_id:UInt64}
      AND ts >= {since:DateTime('UTC')} AND ts < {until:DateTime('UTC')}
      AND page LIKE {pattern:String}
      AND ({environment:String} = '' OR environment = {environment:String})
      AND ({release:String} = '' OR release = {release:String})
      AND ({browser:String} = '' OR browser = {browser:String})
)
ARRAY JOIN arrayFilter(p -> ts >= p.2 AND ts < p.3,
                       {points:Array(Tuple(UInt16, DateTime('UTC'), DateTime('UTC')))}) AS point
WHERE value IS NOT NULL
GROUP BY point
SETTINGS ${view_settings}
