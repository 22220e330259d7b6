"""A release's predecessor: the release of the same projects first seen just before it (first seen as the
release pages and the chart markers count it, `releases/first_seen.sql`). "Release N against N−1" compares
with it."""

from __future__ import annotations

from datetime import UTC, datetime

from clickhouse_connect.driver.client import Client

from stacklens.warehouse.queries import run_query

# Every first-seen time the warehouse can hold: the retention bounds what is read, not this window.
EVER = (datetime(1970, 1, 1, tzinfo=UTC), datetime(2200, 1, 1, tzinfo=UTC))


def predecessor(
    client: Client, org_id: int, project_ids: list[int], version: str, environment: str = ""
) -> str | None:
    """The release first seen just before ``version`` among the projects' releases (over several projects,
    each release's earliest first seen); None for the first release, or one never seen."""
    if not project_ids:
        return None
    rows = run_query(
        client,
        "releases/first_seen",
        {
            "org_id": org_id,
            "project_ids": sorted(project_ids),
            "environment": environment,
            "since": EVER[0],
            "until": EVER[1],
        },
    )
    first: dict[str, datetime] = {}
    for row in rows:
        release, at = str(row["release"]), row["first_seen"]
        first[release] = min(first.get(release, at), at)
    if version not in first:
        return None
    before = [(at, release) for release, at in first.items() if (at, release) < (first[version], version)]
    return max(before)[1] if before else None
