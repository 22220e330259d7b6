-- Check related_issues_are_valid: the relations the run wrote (version {v}) with a strength outside (0, 1], or that
-- relate an issue to itself.
SELECT count() FROM related_issues
WHERE materialized_at = {v:DateTime64(6, 'UTC')} AND is_deleted = 0
  AND (strength <= 0 OR strength > 1 OR issue_id = related_issue_id)
