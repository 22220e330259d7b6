"""Markers against the real embedded engine: a release's marker is where it was first seen (its first page
load within the retention), only releases first seen in the window are marked, another organization's never
are; annotations join them; markers closer than a twelfth of the window are drawn as one that lists them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from stacklens.annotations import create_annotation
from stacklens.control.db import session_scope
from stacklens.markers import ANNOTATION, LISTED, RELEASE, Marker, chart_markers, grouped, release_markers
from stacklens.settings import Settings
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def _marker(hours: float, text: str = "r", kind: str = RELEASE) -> Marker:
    return Marker(T0 + timedelta(hours=hours), kind, text, "web", text)


def test_markers_closer_than_a_twelfth_of_the_window_are_one() -> None:
    window = (T0, T0 + timedelta(hours=24))  # a twelfth: 2 hours
    deploys = [_marker(h / 10, f"d{h}") for h in range(30)]  # one every 6 minutes for 3 hours
    groups = grouped([*deploys, _marker(12, "shop@2"), _marker(30, "outside")], *window)
    assert [len(g.members) for g in groups] == [20, 10, 1]  # 0–1.9 h, 2–2.9 h, then the lone release at noon
    # Issue 71: a group is named by its newest release, the rest counted ("2 markers" named nothing).
    assert groups[0].label == "d19 +19 more" and groups[2].label == "shop@2"
    assert len(groups[0].details) == LISTED + 1 and groups[0].details[-1] == "and 10 more"
    assert groups[2].details == ["shop@2 first seen 2026-11-01 12:00 UTC (web)"]
    many = grouped([_marker(h) for h in range(0, 24 * 30)], T0, T0 + timedelta(days=30))
    assert len(many) == 12  # a deploy an hour for 30 days: twelve markers, not 720
    mixed = grouped([_marker(1), _marker(1.5, "flag", ANNOTATION)], *window)
    assert mixed[0].label == f"{mixed[0].members[0].text} +1 more"  # the release, not the deploy note
    assert mixed[0].named.kind == "release"


def test_releases_are_marked_where_first_seen(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    client = migrated(settings)
    data = seed(client, int(acme["org_id"]), int(acme["project_id"]), loads=80, facts=False)
    seed(client, int(other["org_id"]), int(other["project_id"]), loads=20, seed=3)
    first = {}
    for row in data.transactions:
        first[row["release"]] = min(first.get(row["release"], row["timestamp"]), row["timestamp"])
    projects = {int(acme["project_id"]): str(acme["project"])}
    window = (NOW - timedelta(days=10), NOW + timedelta(hours=1))
    found = release_markers(client, int(acme["org_id"]), projects, *window)
    # shop@1.0.0 began 14 days ago, before the window: no marker; shop@1.1.0 began 7 days ago.
    assert [(m.text, m.project) for m in found] == [("shop@1.1.0", acme["project"])]
    assert abs(found[0].time - first["shop@1.1.0"]) < timedelta(milliseconds=1)
    wide = release_markers(client, int(acme["org_id"]), projects, NOW - timedelta(days=20), NOW)
    assert [m.text for m in wide] == ["shop@1.0.0", "shop@1.1.0"]
    assert release_markers(client, int(other["org_id"]), projects, *window) == []  # not its project
    with session_scope(settings) as session:
        create_annotation(
            session,
            int(acme["org_id"]),
            {"text": "deploy", "tags": ["deploy"], "time": (NOW - timedelta(days=2)).isoformat()},
        )
        create_annotation(
            session, int(other["org_id"]), {"text": "theirs", "time": (NOW - timedelta(days=2)).isoformat()}
        )
        groups = chart_markers(client, session, int(acme["org_id"]), list(projects), *window)
    assert [g.label for g in groups] == ["shop@1.1.0", "deploy"]
