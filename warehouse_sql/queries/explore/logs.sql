-- Explore's `logs` dataset (stacklens/explore/datasets.py): one row per log record of the organization's projects
-- in the window [since, until) (migration 0012). Columns: ts, uid (none: ''), tags (the record's attributes, so
-- `tag:<attribute>` filters and groups by one), f_<field> per field of the dataset; a count of rows is the
-- `log_records` metric.
SELECT timestamp AS ts, '' AS uid, attributes AS tags,
       environment AS f_environment, release AS f_release, severity AS f_severity,
       toFloat64(severity_number) AS f_severity_number, service AS f_service, body AS f_body,
       trace_id AS f_trace_id, source AS f_source
FROM logs
WHERE org_id = {org_id:UInt64} AND project_id IN {project_ids:Array(UInt64)}
  AND timestamp >= {since:DateTime64(3, 'UTC')} AND timestamp < {until:DateTime64(3, 'UTC')}
