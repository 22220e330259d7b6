"""The issue workflow against the real embedded engine: transitions, history, derived states."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from stacklens.issues.rules import apply_system_transitions
from stacklens.issues.workflow import IllegalTransition, change_status, current_states, history

ORG, PROJECT, ISSUE = 7, 70, 123456789


def add_events(client, n: int, *, release: str = "1.0.0", issue_id: int = ISSUE, user: str = "u1") -> None:
    now = datetime.now(UTC)
    rows = [
        [
            ORG,
            PROJECT,
            uuid.uuid4(),
            issue_id,
            "fp",
            now,
            now,
            "ValueError: boom",
            "app:handler",
            release,
            user,
        ]
        for _ in range(n)
    ]
    cols = [
        "org_id",
        "project_id",
        "event_id",
        "issue_id",
        "fingerprint",
        "timestamp",
        "received_at",
        "title",
        "culprit",
        "release",
        "user_key",
    ]
    client.insert("events", rows, column_names=cols)


def listed_status(client) -> str:
    return client.query(
        "SELECT status FROM issue_list(project_id = {p:UInt64}) WHERE issue_id = {i:UInt64}",
        parameters={"p": PROJECT, "i": ISSUE},
    ).result_rows[0][0]


def test_resolve_then_new_event_regresses_with_history(client) -> None:
    add_events(client, 2)
    assert listed_status(client) == "unresolved"
    change_status(
        client, org_id=ORG, project_id=PROJECT, issue_id=ISSUE, status="resolved", actor="ann@example.com"
    )
    assert listed_status(client) == "resolved"
    assert current_states(client, PROJECT, [ISSUE])[ISSUE].status == "resolved"
    add_events(client, 1)
    # The list shows it at once; the system rule writes it down with a history row.
    assert listed_status(client) == "regressed"
    changed = apply_system_transitions(client)
    assert [(c.from_status, c.to_status) for c in changed] == [("resolved", "regressed")]
    assert apply_system_transitions(client) == []
    rows = history(client, PROJECT, ISSUE)
    assert [(r.from_status, r.to_status, r.actor) for r in rows] == [
        ("unresolved", "resolved", "ann@example.com"),
        ("resolved", "regressed", "system"),
    ]
    # From regressed a person may resolve again.
    change_status(
        client, org_id=ORG, project_id=PROJECT, issue_id=ISSUE, status="resolved", actor="ann@example.com"
    )
    assert listed_status(client) == "resolved"


def test_resolved_next_release_regresses_only_on_another_release(client) -> None:
    add_events(client, 1, release="1.0.0")
    state = change_status(
        client, org_id=ORG, project_id=PROJECT, issue_id=ISSUE, status="resolved_next_release", actor="a"
    )
    assert state.resolved_release == "1.0.0"
    add_events(client, 3, release="1.0.0")
    assert listed_status(client) == "resolved_next_release"
    assert apply_system_transitions(client) == []
    add_events(client, 1, release="1.1.0")
    assert listed_status(client) == "regressed"
    assert [t.to_status for t in apply_system_transitions(client)] == ["regressed"]


def test_ignore_until_events_and_until_time(client) -> None:
    add_events(client, 5)
    change_status(
        client,
        org_id=ORG,
        project_id=PROJECT,
        issue_id=ISSUE,
        status="ignored",
        actor="a",
        ignore_until_events=3,
    )
    add_events(client, 2)
    assert listed_status(client) == "ignored"
    add_events(client, 1)
    assert listed_status(client) == "unresolved"
    assert [t.to_status for t in apply_system_transitions(client)] == ["unresolved"]
    until = datetime.now(UTC) + timedelta(seconds=1)
    change_status(
        client,
        org_id=ORG,
        project_id=PROJECT,
        issue_id=ISSUE,
        status="ignored",
        actor="a",
        ignore_until=until,
    )
    assert listed_status(client) == "ignored"
    client.command("SELECT sleep(1.2)")
    assert listed_status(client) == "unresolved"
    assert history(client, PROJECT, ISSUE)[-1].to_status == "ignored"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"status": "regressed"}, "set by the system"),
        ({"status": "closed"}, "unknown status"),
        ({"status": "unresolved"}, "from unresolved to unresolved"),
        ({"status": "resolved", "ignore_until_events": 5}, "only apply to the ignored"),
        ({"status": "resolved", "release": "1.0"}, "only applies to the resolved_next_release"),
        ({"status": "ignored", "ignore_until_events": 0}, "positive"),
        ({"status": "ignored", "ignore_until": datetime(2000, 1, 1, tzinfo=UTC)}, "future"),
        ({"status": "resolved", "actor": " "}, "actor"),
    ],
)
def test_illegal_transitions_are_refused_and_leave_no_history(client, kwargs, message) -> None:
    add_events(client, 1)
    args = {"org_id": ORG, "project_id": PROJECT, "issue_id": ISSUE, "actor": "a", **kwargs}
    with pytest.raises(IllegalTransition, match=message):
        change_status(client, **args)
    assert history(client, PROJECT, ISSUE) == []


def test_resolved_cannot_go_to_resolved_next_release(client) -> None:
    add_events(client, 1)
    change_status(client, org_id=ORG, project_id=PROJECT, issue_id=ISSUE, status="resolved", actor="a")
    with pytest.raises(IllegalTransition, match="from resolved to resolved_next_release"):
        change_status(
            client, org_id=ORG, project_id=PROJECT, issue_id=ISSUE, status="resolved_next_release", actor="a"
        )


def test_another_org_cannot_read_or_inherit_state(client) -> None:
    add_events(client, 1)
    change_status(client, org_id=ORG, project_id=PROJECT, issue_id=ISSUE, status="resolved", actor="a")
    # Another organization asking about the same numbers starts from unresolved (no existence leak).
    state = change_status(
        client, org_id=ORG + 1, project_id=PROJECT, issue_id=ISSUE, status="ignored", actor="b"
    )
    assert state.org_id == ORG + 1
