"""Issue-tracker integrations: token-based clients of GitHub, GitLab, Jira and Linear, and the linking of
StackLens issues to tickets (DESIGN §7.1)."""
