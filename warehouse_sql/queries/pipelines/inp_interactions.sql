-- Refresh `inp_interactions` for the interactions that started in [{start}, {end}): one row per standalone INP
-- span (transactions rows of op `ui.interaction.*`, stacklens/ingest/inp.py) with its attribution read from the
-- span as stored (`payload`): the `data` of a v1 span (what stacklens_sdk's browser INP attribution sends) or the
-- typed `attributes` of a v2 one — `inp.target`, `inp.type`, `inp.input_delay`, `inp.processing`,
-- `inp.presentation` (ms), `inp.loaf` (the browser gave long-animation-frame data) and `inp.scripts`
-- (`[{"url", "function", "invoker", "duration", "part"}]`). Without `inp.target` the target is the span's
-- description / name (what @sentry/browser's own INP span carries: the element), without `inp.type` the end of
-- its op. A script is a third party's when its host (with port) is set and is neither the page's host nor one of
-- the project's own hosts ({fp_projects} / {fp_hosts}: projects.first_party_hosts; an entry matches with or
-- without the port); a script without a URL (the browser's own work) is the page's. third_party_ms is NULL
-- without long-animation-frame data: unknown, never 0.
INSERT INTO inp_interactions
SELECT org_id, project_id, timestamp, event_id, trace_id, page, environment, release, browser_name,
       target, type, inp, input_delay, processing, presentation, loaf,
       urls, hosts, functions, invokers, durations, parts, thirds,
       arraySum(arrayMap((d, t) -> if(t = 0, d, 0), durations, thirds)),
       if(loaf = 1, arraySum(arrayMap((d, t) -> if(t = 1, d, 0), durations, thirds)), NULL),
       {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, timestamp, event_id, trace_id, page, environment, release, browser_name,
           measurements['inp'] AS inp,
           JSONExtractRaw(payload, 'data') AS d,
           JSONExtractRaw(payload, 'attributes') AS a,
           lower(extract(url, '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#@]+)')) AS page_host,
           {fp_hosts:Array(Array(String))}[indexOf({fp_projects:Array(UInt64)}, project_id)] AS own,
           substring(coalesce(nullIf(JSONExtractString(d, 'inp.target'), ''),
                              nullIf(JSONExtractString(a, 'inp.target', 'value'), ''),
                              nullIf(JSONExtractString(payload, 'description'), ''),
                              JSONExtractString(payload, 'name')), 1, 512) AS target,
           coalesce(nullIf(JSONExtractString(d, 'inp.type'), ''), nullIf(JSONExtractString(a, 'inp.type', 'value'), ''),
                    nullIf(replaceRegexpOne(op, '^ui\\.interaction\\.?', ''), '')) AS type,
           coalesce(JSONExtract(d, 'inp.input_delay', 'Nullable(Float64)'),
                    JSONExtract(a, 'inp.input_delay', 'value', 'Nullable(Float64)')) AS input_delay,
           coalesce(JSONExtract(d, 'inp.processing', 'Nullable(Float64)'),
                    JSONExtract(a, 'inp.processing', 'value', 'Nullable(Float64)')) AS processing,
           coalesce(JSONExtract(d, 'inp.presentation', 'Nullable(Float64)'),
                    JSONExtract(a, 'inp.presentation', 'value', 'Nullable(Float64)')) AS presentation,
           toUInt8(JSONExtractBool(d, 'inp.loaf') OR JSONExtractBool(a, 'inp.loaf', 'value')) AS loaf,
           arraySlice(JSONExtractArrayRaw(d, 'inp.scripts'), 1, 50) AS scripts,
           arrayMap(s -> substring(JSONExtractString(s, 'url'), 1, 1024), scripts) AS urls,
           arrayMap(u -> lower(extract(u, '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#@]+)')), urls) AS hosts,
           arrayMap(s -> substring(JSONExtractString(s, 'function'), 1, 256), scripts) AS functions,
           arrayMap(s -> substring(JSONExtractString(s, 'invoker'), 1, 512), scripts) AS invokers,
           arrayMap(s -> greatest(JSONExtractFloat(s, 'duration'), 0), scripts) AS durations,
           arrayMap(s -> if(JSONExtractString(s, 'part') IN ('input_delay', 'processing', 'presentation'),
                            JSONExtractString(s, 'part'), 'processing'), scripts) AS parts,
           arrayMap(h -> toUInt8(h != '' AND h != page_host AND NOT has(own, h)
                                 AND NOT has(own, splitByChar(':', h)[1])), hosts) AS thirds
    FROM transactions FINAL
    WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
      AND startsWith(op, 'ui.interaction') AND mapContains(measurements, 'inp')
)
SETTINGS join_use_nulls = 0
