-- The issue list of one project: the issues with events in the window [{since}, {until}) and the dimension filters
-- (macro issue_window_rows: whole days from the daily tables, the edge days from the stored events), their
-- descriptive columns, first / last seen (the issue's own, all time) and live status from the `issue_list` view,
-- one keyset page. The page's figures are read again for its issues by issues/window_figures (the same rows), so
-- events are counted here for the sort and the filter only.
-- Empty-string filters mean "any"; `key:value` tag terms match issues that carried every pair on some day
-- of the window (issue_tags_daily). `sort` is last_seen | first_seen | events | users; the page continues
-- after (cursor_value, cursor_id) in descending order (cursor_id 0 = first page). {issue_ids} (non-empty) keeps only
-- those issues and {exclude_ids} drops those: the `assigned:` filters, resolved in the control store.
SELECT
    f.issue_id AS issue_id,
    l.title AS title,
    l.culprit AS culprit,
    l.level AS level,
    l.platform AS platform,
    l.status AS status,
    f.n_events AS events,
    f.n_users AS users,
    l.first_seen AS first_seen,
    l.last_seen AS last_seen,
    multiIf(
        {sort:String} = 'events', toFloat64(f.n_events),
        {sort:String} = 'users', toFloat64(f.n_users),
        {sort:String} = 'first_seen', toFloat64(toUnixTimestamp64Milli(l.first_seen)),
        toFloat64(toUnixTimestamp64Milli(l.last_seen))
    ) AS sort_value
FROM
(
    SELECT
        issue_id,
        sum(events) AS n_events,
        -- Distinct-user states are costly to read for every issue: only the users sort reads them here (the
        -- constant `if` is folded, so other sorts never read the column).
        uniqMerge(
            if({sort:String} = 'users', users, initializeAggregation('uniqState', CAST(NULL, 'Nullable(String)')))
        ) AS n_users
    FROM
    (
        ${issue_window_rows}
    )
    WHERE (
        length({tag_keys:Array(String)}) = 0
        OR issue_id IN (
            -- Issues that carried every searched tag pair on some day of the window (issue_tags_daily).
            SELECT issue_id
            FROM issue_tags_daily
            WHERE org_id = {org_id:UInt64}
              AND project_id = {project_id:UInt64}
              AND tag_key IN {tag_keys:Array(String)}
              AND tag_value IN {tag_values:Array(String)}
              AND has(arrayZip({tag_keys:Array(String)}, {tag_values:Array(String)}), (tag_key, tag_value))
              AND day >= toDate({since:DateTime64(3, 'UTC')})
              AND day <= toDate({until:DateTime64(3, 'UTC')})
            GROUP BY issue_id
            HAVING uniqExact(tag_key) = length({tag_keys:Array(String)})
        )
    )
    GROUP BY issue_id
    HAVING n_events > 0
) AS f
INNER JOIN
(
    SELECT issue_id, title, culprit, level, platform, status, first_seen, last_seen
    FROM issue_list(project_id = {project_id:UInt64})
    WHERE org_id = {org_id:UInt64}
) AS l ON l.issue_id = f.issue_id
WHERE has({statuses:Array(String)}, l.status)
  AND NOT has({exclude_ids:Array(UInt64)}, f.issue_id)
  AND ({query:String} = ''
       OR positionCaseInsensitiveUTF8(l.title, {query:String}) > 0
       OR positionCaseInsensitiveUTF8(l.culprit, {query:String}) > 0)
  AND ({cursor_id:UInt64} = 0 OR (sort_value, f.issue_id) < ({cursor_value:Float64}, {cursor_id:UInt64}))
ORDER BY sort_value DESC, issue_id DESC
LIMIT {limit:UInt32}
