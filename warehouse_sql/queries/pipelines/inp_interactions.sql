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
--
-- @sentry/browser without that attribution (browserTracingIntegration({enableLongAnimationFrame: true})) sends no
-- scripts with its INP span: it records each long animation frame as a child span of the page load or navigation
-- it happened in (op `ui.long_animation_frame`, `ui.long-animation-frame` before version 11; stored in `spans` with
-- the transaction), naming the frame's longest script only — `code.file.path` (`browser.script.source_url` before
-- version 11), `code.function.name`, `browser.script.invoker` — and lasting as long as the frame. Its INP span carries the page load's trace. So an INP span with no `inp.loaf` of its own, in a trace
-- without StackLens' attribution spans (those name every script: counting both would count a frame twice), takes
-- the frames of its trace that overlap it as its scripts (the 50 longest; the page's host, for the party, from its
-- page load's URL): the frame's duration as the script's
-- (an upper bound: the frame's rendering and its shorter scripts are in it), part `input_delay` for a frame that
-- began before the input and ended more than 32 ms before the interaction did, else `processing` (the span has
-- no processing start, so no presentation part), and `loaf` 1. The interaction ends at the paint after its
-- handlers ran, which is the end of the frame that ran them (give or take the 8 ms its duration is rounded to and
-- the compositing after the frame): a frame still running then held the processing, even when another task had
-- opened it just before the input came. The last overlapping frame whose named script is a listener of the
-- interaction's own events (its invoker `BUTTON#buy.onclick` for a click) ran its handlers, so it is processing
-- wherever it began and however late the paint came after it (seen under load: the click's own handler put in
-- input delay, its frame opened by another task a moment before the input and the paint 100-460 ms after the
-- frame); an earlier one (a previous click's handler still running) stays input delay. A click whose own handlers
-- were too short to make a long frame, behind a previous click's long one, has that frame taken as its own (the
-- spans do not tell the two apart: the SDK names no script start). Without
-- such frames it stays without script data (`loaf` 0: unknown, never 0 ms) — frames outside a page load or
-- navigation span are not recorded by the SDK.
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
           lower(extract(if(url != '', url, load_url), '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#@]+)')) AS page_host,
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
           toUInt8(JSONExtractBool(d, 'inp.loaf') OR JSONExtractBool(a, 'inp.loaf', 'value') OR from_frames) AS loaf,
           arraySlice(JSONExtractArrayRaw(d, 'inp.scripts'), 1, 50) AS scripts,
           JSONHas(d, 'inp.loaf') OR JSONHas(a, 'inp.loaf') AS own_loaf,
           toUnixTimestamp64Milli(timestamp) AS start_ms,
           toUnixTimestamp64Milli(end_timestamp) AS end_ms,
           arraySlice(arrayReverseSort(x -> x.2, arrayFilter(x -> x.1 < end_ms
                                                                AND x.1 + x.2 > start_ms, frames)), 1, 50) AS overlapping,
           NOT own_loaf AND NOT attributed_trace AND notEmpty(overlapping) AS from_frames,
           if(from_frames, arrayMap(x -> substring(x.3, 1, 1024), overlapping),
              arrayMap(s -> substring(JSONExtractString(s, 'url'), 1, 1024), scripts)) AS urls,
           arrayMap(u -> lower(extract(u, '^[A-Za-z][A-Za-z0-9+.-]*://([^/?#@]+)')), urls) AS hosts,
           if(from_frames, arrayMap(x -> substring(x.4, 1, 256), overlapping),
              arrayMap(s -> substring(JSONExtractString(s, 'function'), 1, 256), scripts)) AS functions,
           if(from_frames, arrayMap(x -> substring(x.5, 1, 512), overlapping),
              arrayMap(s -> substring(JSONExtractString(s, 'invoker'), 1, 512), scripts)) AS invokers,
           if(from_frames, arrayMap(x -> round(x.2, 1), overlapping),
              arrayMap(s -> greatest(JSONExtractFloat(s, 'duration'), 0), scripts)) AS durations,
           -- The start of the last overlapping frame whose script is a listener of this interaction's events
           -- (`BUTTON#buy.onclick` for a click): -1 without one.
           arrayMax(arrayMap(x -> if(has(map('click', ['click', 'pointerdown', 'pointerup', 'mousedown', 'mouseup',
                                                      'touchstart', 'touchend', 'auxclick', 'contextmenu'],
                                             'press', ['keydown', 'keyup', 'keypress', 'input', 'beforeinput'],
                                             'drag', ['dragstart', 'drag', 'dragend', 'dragenter', 'dragleave',
                                                      'dragover', 'drop'])[type],
                                         extract(x.5, '\\.on([a-z]+)$')), x.1, toInt64(-1)),
                             overlapping)) AS handler_start,
           if(from_frames, arrayMap(x -> if(x.1 != handler_start AND x.1 < start_ms AND x.1 + x.2 < end_ms - 32,
                                            'input_delay', 'processing'),
                                    overlapping),
              arrayMap(s -> if(JSONExtractString(s, 'part') IN ('input_delay', 'processing', 'presentation'),
                               JSONExtractString(s, 'part'), 'processing'), scripts)) AS parts,
           arrayMap(h -> toUInt8(h != '' AND h != page_host AND NOT has(own, h)
                                 AND NOT has(own, splitByChar(':', h)[1])), hosts) AS thirds
    FROM
    (
        SELECT *, max(position(payload, '"inp.loaf"') > 0) OVER (PARTITION BY project_id, trace_id) AS attributed_trace
        FROM transactions FINAL
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} AND timestamp < {end:DateTime64(3, 'UTC')}
          AND startsWith(op, 'ui.interaction') AND mapContains(measurements, 'inp')
    ) AS i
    LEFT JOIN
    (
        -- The long animation frames @sentry/browser recorded in the page loads and navigations of these hours
        -- (a page load starts before its interactions: an hour earlier is read too; a minute later, for the frame
        -- of an interaction at the hours' end), per trace: (start in epoch ms, duration ms, the longest script's
        -- URL, function, invoker); and the page's URL from its page load (@sentry/browser's INP span names none).
        SELECT project_id, trace_id,
               groupArray((toUnixTimestamp64Milli(timestamp), duration_ms,
                           if(data['code.file.path'] != '', data['code.file.path'], data['browser.script.source_url']),
                           data['code.function.name'], data['browser.script.invoker'])) AS frames
        FROM spans FINAL
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR
          AND timestamp < {end:DateTime64(3, 'UTC')} + INTERVAL 1 MINUTE
          AND op IN ('ui.long_animation_frame', 'ui.long-animation-frame') AND trace_id != ''
        GROUP BY project_id, trace_id
    ) AS f USING (project_id, trace_id)
    LEFT JOIN
    (
        SELECT project_id, trace_id, any(url) AS load_url
        FROM transactions FINAL
        WHERE timestamp >= {start:DateTime64(3, 'UTC')} - INTERVAL 1 HOUR AND timestamp < {end:DateTime64(3, 'UTC')}
          AND op IN ('pageload', 'navigation') AND trace_id != '' AND url != ''
        GROUP BY project_id, trace_id
    ) AS l USING (project_id, trace_id)
)
SETTINGS join_use_nulls = 0
