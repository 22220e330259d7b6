"""`issues.users_affected` from `issue_users`: each run adds only the users it has not seen, with the
count, so re-reading the watermark overlap, a rerun and a rebuild from the events all leave the exact
distinct count."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from pipelines import warehouse_ops as ops
from pipelines.embedded import materialize_now
from tests.pipelines.pipeline_seed import EV_COLS, ORG, PROJECT, _insert

ISSUE = 8101


def _events(users: list[str]) -> list[dict]:
    now = datetime.now(UTC)
    return [
        {
            "org_id": ORG,
            "project_id": PROJECT,
            "event_id": uuid.uuid4(),
            "issue_id": ISSUE,
            "fingerprint": f"fp-{ISSUE}",
            "timestamp": now - timedelta(minutes=5),
            "received_at": now,
            "title": "KeyError: sku",
            "culprit": "app.cart:add",
            "level": "error",
            "release": "1.0",
            "environment": "production",
            "service": "web",
            "user_key": user,
            "in_app_frames": ["app.cart:add"],
        }
        for user in users
    ]


def _users(client, defs, instance) -> tuple[int, int]:
    outcomes = materialize_now(defs, instance, ["issues"])
    assert outcomes and all(o.success for o in outcomes), [o.error for o in outcomes]
    row = client.query(
        "SELECT users_affected, events FROM issues FINAL WHERE project_id = {p:UInt64} AND issue_id = {i:UInt64}",
        parameters={"p": PROJECT, "i": ISSUE},
    ).result_rows[0]
    return int(row[0]), int(row[1])


def test_users_affected_stays_exact_across_runs(client, instance, defs) -> None:
    _insert(client, "events", _events(["ann", "bob", "ann"]), EV_COLS)
    assert _users(client, defs, instance) == (2, 3)  # first run: from the events

    # bob again, cid new, an event without user: one more user; the run re-reads its 30 s overlap.
    _insert(client, "events", _events(["bob", "cid", ""]), EV_COLS)
    assert _users(client, defs, instance) == (3, 6)
    _insert(client, "events", _events(["cid"]), EV_COLS)
    assert _users(client, defs, instance) == (3, 7)
    members, counted = client.query(
        "SELECT countIf(kind = 1), sumIf(users, kind = 0) FROM issue_users FINAL WHERE issue_id = {i:UInt64}",
        parameters={"i": ISSUE},
    ).result_rows[0]
    assert (members, counted) == (3, 3)  # never a user twice, and the count agrees with the members

    # A rebuild from the stored events (as after a long outage) adds nothing; a count that disagrees with the
    # members (a rebuild's INSERT landing in part) is corrected by it.
    client.command(
        "INSERT INTO issue_users (kind, k, issue_id, project_id, users) VALUES (0, {i:UInt64}, {i:UInt64}, {p:UInt64}, 5)",
        parameters={"i": ISSUE, "p": PROJECT},
    )
    ops.set_watermark(client, "issues", ops.EPOCH)
    assert _users(client, defs, instance) == (3, 7)
