"""Merges and splits with the control store on SQLite and PostgreSQL and the real embedded warehouse: a
chain of merges (A into B, then B into C) moves every fingerprint to C and A's and B's ids lead to C; every
insert-time table keyed by issue counts the stored events after each step; a split gives fingerprints their
own issue back; history lines; another organization's session cannot merge or split."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from clickhouse_connect.driver.client import Client
from sqlalchemy import select

from stacklens.control.activity import list_activity
from stacklens.control.activity_text import describe
from stacklens.control.db import session_scope
from stacklens.control.issue_merges import has_merges, overrides_of
from stacklens.control.models import ActivityEntry, IssueAction
from stacklens.errors import InvalidInput, NotFound
from stacklens.ingest.grouping import issue_id_for
from stacklens.issues.merge_reads import fingerprints_of, merged_groups, merged_into
from stacklens.issues.merges import merge, split
from stacklens.issues.timeline import timeline
from stacklens.settings import Settings
from stacklens.warehouse.queries import load_query
from tests.dashboards.landing import land, sdk_event

# Each insert-time table's measure of an issue's events, beside the stored events' own count.
COUNTED = {
    "issue_live_counters": "sum(events)",
    "issue_totals_daily": "sum(events)",
    "issue_facets_daily": "sum(events)",
}


def _a() -> None:
    raise KeyError("a")


def _b() -> None:
    raise ValueError("b")


def _c() -> None:
    raise TypeError("c")


def _figures(warehouse: Client, project_id: int, issue_id: int) -> dict[str, int]:
    ids = {"p": project_id, "i": issue_id}
    out = {
        "stored": int(
            warehouse.query(
                "SELECT uniqExact(event_id) FROM events FINAL WHERE project_id = {p:UInt64} AND issue_id = {i:UInt64}",
                parameters=ids,
            ).result_rows[0][0]
        )
    }
    for table, measure in COUNTED.items():
        sql = f"SELECT {measure} FROM {table} WHERE project_id = {{p:UInt64}} AND issue_id = {{i:UInt64}}"  # noqa: S608 - the test's own table names
        out[table] = int(warehouse.query(sql, parameters=ids).result_rows[0][0] or 0)
    return out


def _equal(warehouse: Client, project_id: int, issue_id: int, events: int) -> None:
    assert _figures(warehouse, project_id, issue_id) == {"stored": events, **dict.fromkeys(COUNTED, events)}
    _marts_equal(warehouse, project_id, issue_id)


def _build_marts(warehouse: Client) -> None:
    """The issue marts as the `issues` asset builds them on a first run."""
    now = datetime.now(UTC)
    for name in ("issue_users_full", "issue_users_repair"):
        warehouse.command(load_query(f"pipelines/{name}"))
    warehouse.command(
        load_query("pipelines/issues_refresh"),
        parameters={
            "since": datetime(1970, 1, 1, tzinfo=UTC),
            "materialized_at": now,
            "project_id": 0,
            "issue_ids": [],
        },
    )


def _marts_equal(warehouse: Client, project_id: int, issue_id: int) -> None:
    """The marts say what the stored events say from the merge or split on: events, users and first seen; an
    issue with no events left has no row in the issues mart."""
    ids = {"p": project_id, "i": issue_id}
    stored = warehouse.query(
        "SELECT count(), uniqExactIf(user_key, user_key != ''), min(timestamp) FROM events FINAL "
        "WHERE project_id = {p:UInt64} AND issue_id = {i:UInt64}",
        parameters=ids,
    ).result_rows[0]
    mart = warehouse.query(
        "SELECT events, users_affected, first_seen FROM issues FINAL WHERE project_id = {p:UInt64} AND issue_id = {i:UInt64}",
        parameters=ids,
    ).result_rows
    if stored[0] == 0:
        assert mart == []
    else:
        assert mart == [(stored[0], stored[1], stored[2])]


def test_a_chain_of_merges_and_a_split(control_settings: Settings, make_org, warehouse: Client) -> None:
    mine, theirs = make_org("Mine"), make_org("Theirs")
    org, project = mine["org_id"], mine["project_id"]
    ann, bob = {"id": "ann"}, {"id": "bob"}
    rows = land(
        org,
        project,
        [
            sdk_event(_a, user=ann),
            sdk_event(_b, user=ann),
            sdk_event(_b, user=bob),
            sdk_event(_c),
            sdk_event(_c),
        ],
    )
    rows += land(org, project, [sdk_event(_c, user=bob), sdk_event(_c)])
    _build_marts(warehouse)
    a, b, c = rows[0]["issue_id"], rows[1]["issue_id"], rows[3]["issue_id"]
    fp = {a: rows[0]["fingerprint"], b: rows[1]["fingerprint"], c: rows[3]["fingerprint"]}
    with session_scope(control_settings) as session:
        with pytest.raises(InvalidInput, match="ids"):
            merge(session, warehouse, org, [a, "x"], actor="alice@example.test")
        with pytest.raises(InvalidInput, match="into"):
            merge(session, warehouse, org, [a, b], into=c, actor="alice@example.test")
        # Another organization sees none of these issues: nothing merged, nothing split.
        with pytest.raises(NotFound):
            merge(session, warehouse, theirs["org_id"], [a, b], actor="mallory@example.test")
        assert overrides_of(session, project) == {}

        first = merge(session, warehouse, org, [a, b], into=b, actor="alice@example.test")
        assert (first.target, first.merged, first.fingerprints) == (b, [a], [fp[a]])
        _equal(warehouse, project, b, 3)
        _equal(warehouse, project, a, 0)
        second = merge(session, warehouse, org, [b, c], actor="bob@example.test")
        # c has the most events (4 against 3): it survives, and a's fingerprint follows b's into it.
        assert (second.target, second.merged) == (c, [b])
        assert overrides_of(session, project) == {fp[a]: c, fp[b]: c}
        assert merged_into(session, org, a) == (project, c) and merged_into(session, org, b) == (project, c)
        assert merged_into(session, theirs["org_id"], a) is None
        assert has_merges(session, org, project, c) and not has_merges(session, theirs["org_id"], project, c)
        assert fingerprints_of(session, org, project, c, fp[c]) == sorted(fp.values())
        _equal(warehouse, project, c, 7)
        groups = merged_groups(session, warehouse, org, project, c)
        assert [(g.own_issue_id, g.exception_type, g.events) for g in groups] == [
            (b, "ValueError", 2),
            (a, "KeyError", 1),
        ]

        with pytest.raises(NotFound):
            split(session, warehouse, theirs["org_id"], c, fingerprints=[fp[a]], actor="mallory@example.test")
        with pytest.raises(InvalidInput, match="exception_types"):
            split(session, warehouse, org, c, exception_types=["OSError"], actor="alice@example.test")
        done = split(session, warehouse, org, c, exception_types=["KeyError"], actor="alice@example.test")
        assert done.new_issues == [a] and issue_id_for(project, fp[a]) == a
        _equal(warehouse, project, a, 1)
        _equal(warehouse, project, c, 6)
        assert overrides_of(session, project) == {fp[b]: c}
        assert merged_into(session, org, a) is None

        actions = session.scalars(
            select(IssueAction).where(IssueAction.project_id == project).order_by(IssueAction.id)
        ).all()
        assert [(x.issue_id, x.action) for x in actions] == [
            (b, "merged"),
            (a, "merged_into"),
            (c, "merged"),
            (b, "merged_into"),
            (c, "split"),
            (a, "split"),
        ]
        logged = session.scalars(
            select(ActivityEntry.action).where(
                ActivityEntry.org_id == org, ActivityEntry.action.like("issue.%")
            )
        ).all()
        assert sorted(set(logged)) == ["issue.merged", "issue.merged_into", "issue.split"]
        kinds = [item.kind for item in timeline(session, warehouse, org, project, c)]
        assert kinds == ["merged", "split"]
        entries, _ = list_activity(session, org, limit=100)
        sentences = [describe(e) for e in reversed(entries) if e.action.startswith("issue.")]
        assert sentences == [
            f"Merged issue {a} into issue {b}.",
            f"Issue {a} was merged into issue {b}.",
            f"Merged issue {b} into issue {c}.",
            f"Issue {b} was merged into issue {c}.",
            f"Split issue {a} out of issue {c}.",
            f"Split issue {a} back out of issue {c}.",
        ]
