-- Refresh the periods of grain `${grain}` ('minute' or 'hour') of `resource_request_periods` for the hours in
-- [{start}, {end}) from `resource_facts` (refreshed just before by the same tick): per period, filter dimensions and
-- resource, the aggregates of the resource_request_states macro. The one statement of queries/pipelines/
-- resource_request_periods_minute.sql and resource_request_periods_hour.sql, so the two grains cannot drift.
INSERT INTO resource_request_periods
SELECT org_id, project_id, '${grain}' AS grain, toStartOfInterval(ts, INTERVAL 1 ${grain}) AS ${grain}, environment,
       release, browser, resource_type, resource_key AS resource, host_key AS host, page_host,
       ${resource_request_states},
       {materialized_at:DateTime64(6, 'UTC')}
FROM
(
    SELECT org_id, project_id, ts, environment, release, browser, resource_type,
           if(is_request = 1, '', toString(resource)) AS resource_key, if(is_request = 1, '', toString(host)) AS host_key,
           page_host, page, enc, dec, transfer_size, duration_ms, blocking_status, fcp, first_of_resource, first_of_type
    FROM resource_facts FINAL
    WHERE ts >= {start:DateTime64(3, 'UTC')} AND ts < {end:DateTime64(3, 'UTC')}
)
GROUP BY org_id, project_id, ${grain}, environment, release, browser, resource_type, resource_key, host_key, page_host
