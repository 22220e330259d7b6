"""`related_issues` over capped sets: exact Jaccard while sets are small, the 10-most-frequent cap, and a
relation that stops holding disappears (tombstone under FINAL) when one of its issues gets new events."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from pipeline_seed import EV_COLS, ORG, PROJECT, _insert

from pipelines.embedded import materialize_now

A, B = 7001, 7002


def _events(issue: int, users: list[str], at: datetime) -> list[dict]:
    return [
        {
            "org_id": ORG,
            "project_id": PROJECT,
            "event_id": uuid.uuid4(),
            "issue_id": issue,
            "fingerprint": f"fp-{issue}",
            "timestamp": at - timedelta(days=1, minutes=7 * issue % 97),
            "received_at": datetime.now(UTC),
            "title": f"KeyError: {issue}",
            "culprit": f"app.views:view_{issue}",
            "level": "error",
            "release": "",
            "environment": "production",
            "service": "web",
            "user_key": user,
            "in_app_frames": [f"app.views:view_{issue}"],
        }
        for user in users
    ]


def _same_user(client) -> dict[tuple[int, int], tuple[float, int]]:  # type: ignore[no-untyped-def]
    rows = client.query(
        "SELECT issue_id, related_issue_id, strength, shared FROM related_issues FINAL"
        " WHERE project_id = {p:UInt64} AND reason = 'same_user'",
        parameters={"p": PROJECT},
    ).result_rows
    return {(int(a), int(b)): (float(s), int(n)) for a, b, s, n in rows}


def _run(defs, instance) -> None:  # type: ignore[no-untyped-def]
    outcomes = materialize_now(defs, instance, ["related_issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]


def test_relation_ends_when_the_shared_user_leaves_the_capped_set(client, instance) -> None:  # type: ignore[no-untyped-def]
    from pipelines.definitions import current_definitions

    defs = current_definitions()
    now = datetime.now(UTC)
    # A: users ann, bob; B: ann, cid, dan → one shared of four: 1/4, both directions.
    _insert(
        client, "events", _events(A, ["ann", "bob"], now) + _events(B, ["ann", "cid", "dan"], now), EV_COLS
    )
    _run(defs, instance)
    assert _same_user(client) == {(A, B): (pytest.approx(0.25), 1), (B, A): (pytest.approx(0.25), 1)}

    # A gets 20 users with two events each (two of them three): ann (one event) drops out of A's 10 most
    # frequent users, so A and B share nobody any more and the relation must go, in both directions.
    regulars = [f"regular-{k}" for k in range(20)]
    _insert(client, "events", _events(A, regulars * 2 + regulars[:2], now), EV_COLS)
    _run(defs, instance)
    assert _same_user(client) == {}
    sets = client.query(
        "SELECT length(elements) FROM issue_related_sets FINAL"
        " WHERE project_id = {p:UInt64} AND issue_id = {a:UInt64} AND reason = 'same_user'",
        parameters={"p": PROJECT, "a": A},
    ).result_rows
    assert sets == [(10,)]

    # B gets A's two most frequent users: shared 2 of |A ∪ B| = 10 + 5 - 2 = 13.
    _insert(client, "events", _events(B, regulars[:2], now), EV_COLS)
    _run(defs, instance)
    assert _same_user(client) == {(A, B): (pytest.approx(2 / 13), 2), (B, A): (pytest.approx(2 / 13), 2)}
    checks = client.query(
        "SELECT count() FROM related_issues FINAL WHERE strength <= 0 OR is_deleted = 1"
    ).result_rows
    assert checks == [(0,)]
