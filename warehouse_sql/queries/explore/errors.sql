-- Explore's `errors` dataset (stacklens/explore/datasets.py): one row per error event of the organization's
-- projects in the window [since, until). Columns: ts, uid (the user key "unique users" counts), tags, f_<field> per
-- field of the dataset, m_<metric> per metric it holds. A query reads only the columns it names (the engine drops
-- the others) and its filters apply where the rows are read.
SELECT timestamp AS ts, user_key AS uid, tags,
       environment AS f_environment, release AS f_release, level AS f_level, platform AS f_platform,
       browser_name AS f_browser, os_name AS f_os, transaction AS f_transaction,
       exception_type AS f_exception_type, logger AS f_logger, server_name AS f_server_name, service AS f_service,
       request_url AS f_url, toFloat64(handled) AS f_handled,
       -- 52-bit ids (migration 0001): exact as Float64, the type of every number field.
       toFloat64(issue_id) AS f_issue_id,
       1 AS m_error_events
FROM events
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
