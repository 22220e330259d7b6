"""`related_issues` over bottom-10 MinHash sketches: the exact Jaccard index while sets are small, the
estimate once an issue has 10 elements or more, a relation that stops holding disappears (tombstone under
FINAL) when one of its issues gets new events, and a tick whose sketches did not change writes nothing."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import dagster as dg
import pytest

from pipelines import warehouse_ops as ops
from pipelines.embedded import materialize_now
from tests.pipelines.pipeline_seed import EV_COLS, ORG, PROJECT, _insert

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


def _same_user(client) -> dict[tuple[int, int], tuple[float, int]]:
    rows = client.query(
        "SELECT issue_id, related_issue_id, strength, shared FROM related_issues FINAL"
        " WHERE project_id = {p:UInt64} AND reason = 'same_user'",
        parameters={"p": PROJECT},
    ).result_rows
    return {(int(a), int(b)): (float(s), int(n)) for a, b, s, n in rows}


def _run(defs, instance) -> int:
    """One run of the issues job; the relation rows it wrote (new, changed and removed)."""
    outcomes = materialize_now(defs, instance, ["related_issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    assert all(o.checks.get("related_issues:related_issues_are_valid", True) for o in outcomes)
    run_id = outcomes[0].run_id
    record = instance.get_latest_materialization_event(dg.AssetKey("related_issues"))
    assert record is not None and record.run_id == run_id
    metadata = record.asset_materialization.metadata
    return int(metadata["row_count"].value) + int(metadata["removed"].value)


def _below(client, names: list[str], count: int) -> list[str]:
    """``count`` user keys whose hashes are smaller than those of ``names``, smallest first: they take the
    first places of any sketch they join."""
    rows = client.query(
        "SELECT u FROM (SELECT concat('regular-', toString(number)) AS u FROM numbers(100000))"
        " WHERE cityHash64(u) < arrayMin(arrayMap(n -> cityHash64(n), {names:Array(String)}))"
        " ORDER BY cityHash64(u) LIMIT {n:UInt32}",
        parameters={"names": names, "n": count},
    ).result_rows
    assert len(rows) == count
    return [r[0] for r in rows]


def test_relation_ends_when_the_shared_user_leaves_the_sketch(client, instance, defs) -> None:
    now = datetime.now(UTC)
    # A: users ann, bob; B: ann, cid, dan → complete sets, exact Jaccard: one shared of four, both directions.
    _insert(
        client, "events", _events(A, ["ann", "bob"], now) + _events(B, ["ann", "cid", "dan"], now), EV_COLS
    )
    assert _run(defs, instance) == 2
    assert _same_user(client) == {(A, B): (pytest.approx(0.25), 1), (B, A): (pytest.approx(0.25), 1)}

    # A gets 20 users hashing below everyone else's: its sketch becomes their 10 smallest, without ann, so A
    # and B share no sketched user any more and the relation must go, in both directions.
    regulars = _below(client, ["ann", "bob", "cid", "dan"], 20)
    _insert(client, "events", _events(A, regulars * 2, now), EV_COLS)
    assert _run(defs, instance) == 2  # two tombstones
    assert _same_user(client) == {}
    sketch = client.query(
        "SELECT hashes FROM issue_sketches FINAL"
        " WHERE project_id = {p:UInt64} AND issue_id = {a:UInt64} AND reason = 'same_user'",
        parameters={"p": PROJECT, "a": A},
    ).result_rows
    expected = client.query(
        "SELECT arrayMap(u -> cityHash64(u), {u:Array(String)})", parameters={"u": regulars[:10]}
    ).result_rows[0][0]
    assert sketch == [(expected,)]

    # A user B already has, again: B's sketch is unchanged, so the run writes no relation row.
    _insert(client, "events", _events(B, ["cid"], now), EV_COLS)
    assert _run(defs, instance) == 0

    # B gets A's two smallest users. A has 22 users (sketch full): the strength is the MinHash estimate — of
    # the 10 smallest hashes of both sketches (A's ten), B has two: 2/10; shared = 2 sketched users.
    _insert(client, "events", _events(B, regulars[:2], now), EV_COLS)
    assert _run(defs, instance) == 2
    assert _same_user(client) == {(A, B): (pytest.approx(0.2), 2), (B, A): (pytest.approx(0.2), 2)}
    checks = client.query(
        "SELECT count() FROM related_issues FINAL WHERE strength <= 0 OR is_deleted = 1"
    ).result_rows
    assert checks == [(0,)]

    # A rebuild from the stored events (as after a long outage) finds the same sketches: nothing to write.
    ops.set_watermark(client, "related_issues", ops.EPOCH)
    assert _run(defs, instance) == 0
    assert _same_user(client) == {(A, B): (pytest.approx(0.2), 2), (B, A): (pytest.approx(0.2), 2)}
