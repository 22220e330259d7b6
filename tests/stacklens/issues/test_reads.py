"""Issue-list reads on the real chdb engine: `key:value` tag search answers from the issue_tags_daily
aggregate (fed by its materialized view, and backfilled for events stored before the migration), every
searched pair must match, other projects and organizations never leak in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from stacklens.issues.reads import IssueFilters, list_issues
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.dashboards.landing import land, sdk_event


def _a() -> None:
    raise KeyError("a")


def _b() -> None:
    raise ValueError("bravo")


def _c() -> None:
    raise TypeError("c")


def _event(func, tags: dict[str, str], days_ago: int = 0) -> dict:
    payload = sdk_event(func, tags=tags)
    payload["timestamp"] = (datetime.now(UTC) - timedelta(days=days_ago, minutes=5)).isoformat()
    return payload


def _found(client: Client, org: int, project: int, query: str, range: str = "14d") -> set[int]:
    rows, _ = list_issues(
        client, org, project, IssueFilters(status="all", query=query, range=range).validate()
    )
    return {int(row["issue_id"]) for row in rows}


def test_tag_search_reads_the_aggregate_including_backfilled_events(settings) -> None:
    apply_migrations(settings, up_to=200)  # the raw layer and the issue marts, not the tag aggregate yet
    client = get_warehouse(settings)
    before = land(1, 1, [_event(_a, {"tenant": "blue", "region": "eu"}), _event(_b, {"tenant": "blue"})])
    applied = apply_migrations(settings)
    assert any(name.startswith("0201_") for name in applied)
    after = land(
        1,
        1,
        [
            _event(_c, {"tenant": "green", "region": "eu"}),
            _event(_b, {"region": "us"}, days_ago=3),
        ],
    )
    other_project = land(1, 2, [_event(_a, {"tenant": "blue"})])  # same organization, another project
    other_org = land(2, 3, [_event(_a, {"tenant": "blue"})])  # another organization (project ids are global)
    issue_a, issue_b, issue_c = before[0]["issue_id"], before[1]["issue_id"], after[0]["issue_id"]

    assert _found(client, 1, 1, "tenant:blue") == {issue_a, issue_b}  # backfilled rows
    assert _found(client, 1, 1, "tenant:green") == {issue_c}  # rows from the materialized view
    assert _found(client, 1, 1, "region:eu") == {issue_a, issue_c}
    assert _found(client, 1, 1, "tenant:blue region:eu") == {issue_a}  # every pair must match
    assert _found(client, 1, 1, "tenant:green region:us") == set()
    assert _found(client, 1, 1, 'region:"us"') == {issue_b}
    assert _found(client, 1, 1, "region:us", range="24h") == set()  # the pair was only seen three days ago
    assert _found(client, 1, 1, "tenant:blue bravo") == {issue_b}  # tag term and free text together
    assert _found(client, 1, 1, "tenant:red") == set()
    # Scope: the other project's and the other organization's pairs answer only there.
    assert _found(client, 1, 2, "tenant:blue") == {other_project[0]["issue_id"]}
    assert _found(client, 2, 3, "tenant:blue") == {other_org[0]["issue_id"]}
    assert _found(client, 1, 3, "tenant:blue") == set() and _found(client, 2, 1, "tenant:blue") == set()
    # The aggregate holds one row per pair, day and issue, not one per event.
    counts = client.query(
        "SELECT count() FROM issue_tags_daily FINAL WHERE org_id = 1 AND project_id = 1"
    ).result_rows
    assert counts[0][0] == 6


def test_figures_agree_with_and_without_dimension_filters(settings) -> None:
    """Unfiltered lists read issue_totals_daily, filtered ones issue_facets_daily; users are merged in the
    list query for the users sort and per page otherwise: every path must give the same figures."""
    from stacklens.issues.reads import daily_counts

    apply_migrations(settings)
    client = get_warehouse(settings)

    def with_user(func, user: str, environment: str) -> dict:
        payload = sdk_event(func, user={"id": user}, environment=environment)
        payload["timestamp"] = (datetime.now(UTC) - timedelta(minutes=5)).isoformat()
        return payload

    rows = land(
        1,
        1,
        [
            with_user(_a, "u1", "production"),
            with_user(_a, "u2", "production"),
            with_user(_a, "u2", "production"),
            with_user(_a, "u3", "staging"),
            with_user(_b, "u1", "production"),
            with_user(_b, "u1", "production"),
        ],
    )
    a, b = rows[0]["issue_id"], rows[4]["issue_id"]

    def figures(**kw: str) -> list[tuple[int, int, int]]:
        filters = IssueFilters(status="all", **kw).validate()
        page, _ = list_issues(client, 1, 1, filters)
        return [(int(r["issue_id"]), int(r["events"]), int(r["users"])) for r in page]

    for sort in ("events", "users", "last_seen"):
        assert sorted(figures(sort=sort)) == sorted([(a, 4, 3), (b, 2, 1)]), sort
        assert sorted(figures(sort=sort, environment="production")) == sorted([(a, 3, 2), (b, 2, 1)]), sort
        assert figures(sort=sort, environment="staging") == [(a, 1, 1)], sort
    assert figures(sort="events") == [(a, 4, 3), (b, 2, 1)]
    assert figures(sort="users", environment="production") == [(a, 3, 2), (b, 2, 1)]
    # One page at a time: the second page's users are filled too.
    first, cursor = list_issues(client, 1, 1, IssueFilters(status="all", sort="events", limit=1).validate())
    second, _ = list_issues(
        client, 1, 1, IssueFilters(status="all", sort="events", limit=1, cursor=cursor).validate()
    )
    assert [(int(r["issue_id"]), int(r["users"])) for r in first + second] == [(a, 3), (b, 1)]
    # Sparklines: today's bar holds the same counts either way.
    plain = daily_counts(client, 1, 1, [a, b], IssueFilters(status="all").validate())
    staging = daily_counts(client, 1, 1, [a, b], IssueFilters(status="all", environment="staging").validate())
    assert (sum(plain[a]), sum(plain[b])) == (4, 2) and (sum(staging[a]), sum(staging[b])) == (1, 0)
