-- Per-period states of `inp_interactions` for the INP view (docs/performance.md, "INP causes"): a view reads its
-- window's whole days and hours here and only its partial edge hours (the freshest among them) from the
-- interactions themselves, through the same merge — a few thousand state rows instead of one row per interaction.
-- Written by the `inp_interactions` step right after the interactions of the same hours (grain 'hour' from the
-- interactions, 'day' from the day's hours; queries/pipelines/inp_periods_*.sql, inp_script_periods_*.sql).
--
-- `inp_periods`: per period, filter dimensions (environment, release, browser), page, target (the element) and
-- type:
--   interactions, attributed, with_scripts   counts: all, with the three parts, with long-animation-frame data
--   *_sum                                    sums of INP and of each part (averages, exact)
--   *_hist                                   (value, count) of INP, input delay, processing, presentation delay and
--                                            third-party script time, each value its 1 % wide log bucket's (macro
--                                            pageload_hist_value, as the page-load states keep INP): every reader
--                                            — the view, budgets and alert rules, Explore — takes percentiles with
--                                            quantileExactWeightedInterpolated over these pairs, within 0.5 % of the
--                                            exact one; a value not reported is no entry, never 0
--   first_ms, third_ms, third_interactions   over the interactions with script data: first- and third-party script
--                                            time and how many a third party's script ran in
-- `inp_script_periods`: per period, filter dimensions, page and script (source URL, host, function, invoker): its
-- party (`third`, as the interactions were classified when the period was last written: not part of the key, so
-- a period rewritten after the project's own hosts changed replaces its scripts' party), runs, interactions it ran
-- in, its time (ms) in all and per part of the interaction.
-- Re-running a period replaces its rows (ReplacingMergeTree on materialized_at; the views read FINAL).
CREATE TABLE IF NOT EXISTS inp_periods
(
    org_id              UInt64,
    project_id          UInt64,
    grain               Enum16('hour' = 60, 'day' = 1440),
    start               DateTime('UTC'),
    environment         LowCardinality(String),
    release             LowCardinality(String),
    browser             LowCardinality(String),
    page                LowCardinality(String),
    target              String CODEC(ZSTD(3)),
    type                LowCardinality(String),
    interactions        UInt64,
    attributed          UInt64,
    with_scripts        UInt64,
    inp_sum             Float64,
    input_delay_sum     Float64,
    processing_sum      Float64,
    presentation_sum    Float64,
    third_party_sum     Float64,
    inp_hist            Tuple(Array(Float32), Array(UInt32)) CODEC(ZSTD(3)),
    input_delay_hist    Tuple(Array(Float32), Array(UInt32)) CODEC(ZSTD(3)),
    processing_hist     Tuple(Array(Float32), Array(UInt32)) CODEC(ZSTD(3)),
    presentation_hist   Tuple(Array(Float32), Array(UInt32)) CODEC(ZSTD(3)),
    third_party_hist    Tuple(Array(Float32), Array(UInt32)) CODEC(ZSTD(3)),
    first_ms            Float64,
    third_ms            Float64,
    third_interactions  UInt64,
    materialized_at     DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, page, target, type, environment, release, browser)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

CREATE TABLE IF NOT EXISTS inp_script_periods
(
    org_id           UInt64,
    project_id       UInt64,
    grain            Enum16('hour' = 60, 'day' = 1440),
    start            DateTime('UTC'),
    environment      LowCardinality(String),
    release          LowCardinality(String),
    browser          LowCardinality(String),
    page             LowCardinality(String),
    url              String CODEC(ZSTD(3)),
    host             LowCardinality(String),
    function         String CODEC(ZSTD(3)),
    invoker          String CODEC(ZSTD(3)),
    third            UInt8,
    runs             UInt64,
    interactions     UInt64,
    ms               Float64,
    input_delay_ms   Float64,
    processing_ms    Float64,
    presentation_ms  Float64,
    materialized_at  DateTime64(6, 'UTC')
)
ENGINE = ReplacingMergeTree(materialized_at)
PARTITION BY toYYYYMM(start)
ORDER BY (project_id, org_id, grain, start, page, url, function, invoker, host, environment, release, browser)
TTL start + toIntervalMinute(CAST(grain, 'UInt16')) + INTERVAL ${retention_days} DAY
SETTINGS index_granularity = 256;

-- The attribution's text and arrays compress better with ZSTD than with the default LZ4 (bench/inp.py, the bytes a
-- page load's attribution adds); new parts and merges write them so.
ALTER TABLE inp_interactions
    MODIFY COLUMN trace_id String CODEC(ZSTD(3)),
    MODIFY COLUMN target String CODEC(ZSTD(3)),
    MODIFY COLUMN script_url Array(String) CODEC(ZSTD(3)),
    MODIFY COLUMN script_function Array(String) CODEC(ZSTD(3)),
    MODIFY COLUMN script_invoker Array(String) CODEC(ZSTD(3)),
    MODIFY COLUMN script_ms Array(Float64) CODEC(ZSTD(3));

-- The states fill on the step's next run: it starts over from the raw layer.
INSERT INTO pipeline_watermarks (asset, watermark, updated_at)
VALUES ('inp_interactions', toDateTime64(0, 3, 'UTC'), now64(6))
