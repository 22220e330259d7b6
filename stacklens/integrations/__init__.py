"""Issue-tracker integrations: token-based clients of GitHub, GitLab, Jira and Linear, and the linking of
StackLens issues to tickets (docs/architecture.md §4)."""
