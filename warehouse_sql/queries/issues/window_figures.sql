-- Events and distinct users of a project's issues in one window with the dimension filters: the one read of these
-- figures for the issue list's rows, the issue page, the issues API and release pages (macro issue_window_rows).
SELECT issue_id, sum(events) AS events, uniqMerge(users) AS users
FROM
(
    ${issue_window_rows}
)
GROUP BY issue_id
