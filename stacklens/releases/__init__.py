"""Release health: per release and environment, its sessions (crash-free sessions and users, errored sessions,
adoption), its performance figures from the metrics layer and its new issues, each against the previous
release with an honest verdict (a stated effect size and a test at 95 %). docs/releases.md.

- :func:`stacklens.releases.health.release_health` — every release of a window, oldest first;
- :func:`stacklens.releases.verdicts.verdict` — one release against the one before it;
- :func:`stacklens.releases.detail.release_detail` — one release with its charts and issues.
"""
