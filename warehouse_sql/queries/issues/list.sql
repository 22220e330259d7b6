-- The issue list of one project: figures over the chosen days (issue_totals_daily, or issue_facets_daily
-- when a dimension is filtered), the descriptive columns and live status from the `issue_list` view, one
-- keyset page.
-- Empty-string filters mean "any"; `key:value` tag terms match issues that carried every pair on some day
-- of the range (issue_tags_daily). `sort` is last_seen | first_seen | events | users; the page continues
-- after (cursor_value, cursor_id) in descending order (cursor_id 0 = first page).
SELECT
    f.issue_id AS issue_id,
    l.title AS title,
    l.culprit AS culprit,
    l.level AS level,
    l.platform AS platform,
    l.status AS status,
    f.n_events AS events,
    f.n_users AS users,
    f.first_ts AS first_seen,
    f.last_ts AS last_seen,
    multiIf(
        {sort:String} = 'events', toFloat64(f.n_events),
        {sort:String} = 'users', toFloat64(f.n_users),
        {sort:String} = 'first_seen', toFloat64(toUnixTimestamp64Milli(f.first_ts)),
        toFloat64(toUnixTimestamp64Milli(f.last_ts))
    ) AS sort_value
FROM
(
    SELECT
        issue_id,
        sum(events) AS n_events,
        -- Distinct-user states are costly to read for every issue: only the users sort reads them here (the
        -- constant `if` is folded, so other sorts never read the column); other sorts fill the page's users
        -- afterwards (issues/list_users).
        uniqMerge(
            if({sort:String} = 'users', users, initializeAggregation('uniqState', CAST(NULL, 'Nullable(String)')))
        ) AS n_users,
        min(first_seen) AS first_ts,
        max(last_seen) AS last_ts
    FROM
    (
        -- No dimension filter: the per-issue daily totals. Otherwise the per-combination facets. The branch
        -- whose constant condition is false reads nothing.
        SELECT issue_id, events, users, first_seen, last_seen
        FROM issue_totals_daily
        WHERE {environment:String} = '' AND {release:String} = '' AND {level:String} = ''
          AND {service:String} = ''
          AND project_id = {project_id:UInt64}
          AND org_id = {org_id:UInt64}
          AND day >= toDate({since:DateTime64(3, 'UTC')})
          AND day <= toDate({until:DateTime64(3, 'UTC')})
        UNION ALL
        SELECT issue_id, events, users, first_seen, last_seen
        FROM issue_facets_daily
        WHERE NOT ({environment:String} = '' AND {release:String} = '' AND {level:String} = ''
                   AND {service:String} = '')
          AND project_id = {project_id:UInt64}
          AND org_id = {org_id:UInt64}
          AND day >= toDate({since:DateTime64(3, 'UTC')})
          AND day <= toDate({until:DateTime64(3, 'UTC')})
          AND ({environment:String} = '' OR environment = {environment:String})
          AND ({release:String} = '' OR release = {release:String})
          AND ({level:String} = '' OR level = {level:String})
          AND ({service:String} = '' OR service = {service:String})
    )
    WHERE (
        length({tag_keys:Array(String)}) = 0
        OR issue_id IN (
            -- Issues that carried every searched tag pair on some day of the range (issue_tags_daily).
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
    HAVING last_ts >= {since:DateTime64(3, 'UTC')} AND first_ts <= {until:DateTime64(3, 'UTC')}
) AS f
INNER JOIN
(
    SELECT issue_id, title, culprit, level, platform, status
    FROM issue_list(project_id = {project_id:UInt64})
    WHERE org_id = {org_id:UInt64}
) AS l ON l.issue_id = f.issue_id
WHERE has({statuses:Array(String)}, l.status)
  AND ({query:String} = ''
       OR positionCaseInsensitiveUTF8(l.title, {query:String}) > 0
       OR positionCaseInsensitiveUTF8(l.culprit, {query:String}) > 0)
  AND ({cursor_id:UInt64} = 0 OR (sort_value, f.issue_id) < ({cursor_value:Float64}, {cursor_id:UInt64}))
ORDER BY sort_value DESC, issue_id DESC
LIMIT {limit:UInt32}
