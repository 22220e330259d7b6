-- Whether a span (a transaction's root span or a span under one) matches a trace search (docs/traces.md),
-- over the columns the reading query names `service`, `op`, `name`, `duration_ms`, `status`, `code` (HTTP
-- status), `release`, `environment`. An empty filter matches all; `status` is 'ok', 'error' (a status other
-- than ok, or HTTP 500 or more) or one span status word. A span without a service of its own stands for its
-- project, so a search for the project's slug (`project_named` = 1) finds it. Each filter left empty (a
-- duration bound of 0 or 1e12 ms) is a constant true, so the engine does not read its columns at all.
({service:String} = '' OR service = {service:String} OR (service = '' AND {project_named:UInt8} = 1))
AND ({operation:String} = '' OR op = {operation:String} OR name = {operation:String})
AND ({min_duration:Float64} <= 0 OR duration_ms >= {min_duration:Float64})
AND ({max_duration:Float64} >= 1e12 OR duration_ms <= {max_duration:Float64})
AND ({release:String} = '' OR release = {release:String})
AND ({environment:String} = '' OR environment = {environment:String})
AND ({status:String} = '' OR multiIf(
    {status:String} = 'error', status NOT IN ('', 'ok', 'unset', 'unknown') OR code >= 500,
    {status:String} = 'ok', status IN ('', 'ok', 'unset', 'unknown') AND code < 500,
    status = {status:String}))
