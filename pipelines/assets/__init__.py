"""Assets by domain: issues, performance, releases, budgets."""
