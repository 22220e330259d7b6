-- The projects with an issue whose stored status a derived rule may change (resolved, resolved in the next
-- release, ignored): where the issues tick looks for regressions and ignores that ended (stacklens/issues/rules.py).
SELECT DISTINCT project_id
FROM issue_state FINAL
WHERE status IN ('resolved', 'resolved_next_release', 'ignored')
