"""New issues assigned by ownership rules against the real embedded warehouse: only issues first seen since
the rules, the last matching rule's first owner with the reason recorded, never an issue a person decided,
nothing in another organization, and rules checked against the organization's members and teams when saved."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.models import IssueAction, OwnershipRules, Project
from stacklens.control.teams import create_team, resolve_assignee
from stacklens.errors import InvalidInput
from stacklens.issues.assignees import assign, assignees_of
from stacklens.issues.auto_assign import SYSTEM, assign_new_issues, get_rules, import_codeowners, set_rules
from stacklens.settings import Settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land


def event(
    path: str, *, seconds_ago: float = 0, tags: dict[str, str] | None = None, kind: str = ""
) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "python",
        "level": "error",
        "timestamp": time.time() - seconds_ago,
        "tags": tags or {},
        "exception": {
            "values": [
                {
                    "type": kind or f"Error{uuid.uuid4().hex[:6]}",  # its own issue
                    "value": "boom",
                    "stacktrace": {
                        "frames": [{"abs_path": path, "filename": path, "function": "run", "in_app": True}]
                    },
                }
            ]
        },
    }


RULES = "path:src/checkout/* #payments\ntags.service:worker ops@example.test\npath:src/checkout/legacy/* ops@example.test"


def test_new_issues_follow_the_rules(stores: Settings, org_factory) -> None:
    org, other = org_factory("Owned"), org_factory("Elsewhere")
    org_id, project_id = org["org_id"], org["project_id"]
    with session_scope(stores) as session:
        accounts.add_member(session, org_id, "ops@example.test", "password-123")
        create_team(session, org_id, "payments")
        project = session.get(Project, project_id)
        assert project is not None
        with pytest.raises(InvalidInput, match="line 1: #payments is not a team"):
            set_rules(
                session, other["org_id"], session.get(Project, other["project_id"]), RULES, actor="x@e.test"
            )
        set_rules(session, org_id, project, RULES, actor="owner@example.test")
        assert (
            get_rules(session, org_id, project_id) == RULES
            and get_rules(session, other["org_id"], project_id) == ""
        )
        # The rules' start is an hour back (as if saved then): issues first seen before that stay to people.
        row = session.get(OwnershipRules, project_id)
        assert row is not None
        row.checked_until = row.checked_until - timedelta(hours=1)
    # Arrived three hours ago, before the rules: it stays to people.
    old = land(
        org_id,
        project_id,
        [event("/app/src/checkout/pay.py", seconds_ago=3 * 3600)],
        received_at=time.time() - 3 * 3600,
    )
    rows = land(
        org_id,
        project_id,
        [
            event("/app/src/checkout/pay.py"),
            event("/app/src/search/find.py", tags={"service": "worker"}),
            event("/app/src/checkout/legacy/v1.py"),
            event("/app/src/search/find.py"),
            event("/app/src/checkout/manual.py"),
        ],
    )
    theirs = land(other["org_id"], other["project_id"], [event("/app/src/checkout/pay.py")])
    pay, worker, legacy, nobody, manual = (int(r["issue_id"]) for r in rows)
    client = get_warehouse(stores)
    with session_scope(stores) as session:
        # A person assigned and unassigned this one already: the rules leave it alone.
        ops = resolve_assignee(session, org_id, "ops@example.test")
        assign(session, org_id, project_id, manual, ops, actor="owner@example.test")
        assign(session, org_id, project_id, manual, None, actor="owner@example.test")
        summary = assign_new_issues(session, client)
        assert summary.assigned == 3 and summary.errors == [], summary
    with session_scope(stores) as session:
        found = assignees_of(
            session, org_id, project_id, [pay, worker, legacy, nobody, manual, int(old[0]["issue_id"])]
        )
        assert {i: (a.label, a.rule, a.assigned_by) for i, a in found.items()} == {
            pay: ("#payments", "path:src/checkout/* → #payments", SYSTEM),
            worker: ("ops@example.test", "tags.service:worker → ops@example.test", SYSTEM),
            legacy: ("ops@example.test", "path:src/checkout/legacy/* → ops@example.test", SYSTEM),
        }
        assert assignees_of(session, other["org_id"], other["project_id"], [int(theirs[0]["issue_id"])]) == {}
        # A second run finds nothing new to do and moves the project's watermark on.
        assert assign_new_issues(session, client).assigned == 0
        row = session.scalar(select(OwnershipRules).where(OwnershipRules.project_id == project_id))
        assert row is not None and row.rules == RULES

    # Issue 71: a backlog that arrives 45 minutes late (its events' own times older than the watermark, the
    # 10 minutes of overlap included) is owned when it lands — once.
    late = land(
        org_id,
        project_id,
        [
            event("/app/src/checkout/late.py", seconds_ago=45 * 60, kind="LateCheckoutError"),
            event("/app/src/search/late.py", seconds_ago=44 * 60),
        ],
    )
    late_pay, late_nobody = (int(r["issue_id"]) for r in late)
    with session_scope(stores) as session:
        assert assign_new_issues(session, client).assigned == 1
    with session_scope(stores) as session:
        found = assignees_of(session, org_id, project_id, [late_pay, late_nobody])
        assert {i: a.label for i, a in found.items()} == {late_pay: "#payments"}
        # More of its events later: already owned, not assigned again (one history row).
        more = land(
            org_id,
            project_id,
            [event("/app/src/checkout/late.py", seconds_ago=40 * 60, kind="LateCheckoutError")],
        )
        assert int(more[0]["issue_id"]) == late_pay
        assert assign_new_issues(session, client).assigned == 0
        actions = session.scalars(
            select(IssueAction.action).where(
                IssueAction.issue_id == late_pay, IssueAction.project_id == project_id
            )
        ).all()
        assert len(actions) == 1, actions


def test_codeowners_import(stores: Settings, org_factory) -> None:
    org = org_factory("Importer")
    with session_scope(stores) as session:
        accounts.add_member(session, org["org_id"], "alice@example.test", "password-123")
        create_team(session, org["org_id"], "payments")
        rules, notes = import_codeowners(
            session, org["org_id"], "/src/checkout/ @acme/payments @alice @bob\n"
        )
        assert rules == "path:src/checkout/ #payments alice@example.test"
        assert notes == ["line 1: @bob is no member here, left out"]


def test_an_organizations_spent_share_leaves_its_issues_for_the_next_run(
    stores: Settings,
    org_factory,
) -> None:
    """Each organization has a share of a run: when it is spent nothing of that organization is looked at
    and its watermark stays, so the next run assigns what this one left (issue 62)."""
    orgs = [org_factory("Budgeted"), org_factory("Other")]
    with session_scope(stores) as session:
        for org in orgs:
            create_team(session, org["org_id"], "payments")
            project = session.get(Project, org["project_id"])
            assert project is not None
            set_rules(session, org["org_id"], project, "path:src/checkout/* #payments", actor="o@e.test")
            row = session.get(OwnershipRules, org["project_id"])
            assert row is not None
            row.checked_until = row.checked_until - timedelta(minutes=30)
    landed = [land(o["org_id"], o["project_id"], [event("/app/src/checkout/pay.py")]) for o in orgs]
    client = get_warehouse(stores)
    with session_scope(stores) as session:
        before = {
            o["project_id"]: session.scalar(
                select(OwnershipRules.checked_until).where(OwnershipRules.project_id == o["project_id"])
            )
            for o in orgs
        }
        spent = assign_new_issues(session, client, org_budget_s=0.0)
        assert (spent.assigned, spent.looked_at, spent.deferred) == (0, 0, 2)
    with session_scope(stores) as session:
        for org in orgs:
            row = session.get(OwnershipRules, org["project_id"])
            assert row is not None and row.checked_until == before[org["project_id"]]
        done = assign_new_issues(session, client)
        assert (done.assigned, done.deferred) == (2, 0)
        for org, rows in zip(orgs, landed, strict=True):
            found = assignees_of(session, org["org_id"], org["project_id"], [int(rows[0]["issue_id"])])
            assert [a.label for a in found.values()] == ["#payments"]


def test_a_run_cut_short_mid_project_goes_on_from_the_last_issue_looked_at(
    stores: Settings,
    org_factory,
) -> None:
    """Issues whose matching takes longer than the organization's share: each run looks at what fits (at
    least one issue), moves the watermark to the last issue it looked at, and the next runs go on from there
    until every issue is looked at and the matching one assigned."""
    org = org_factory("Heavy")
    org_id, project_id = org["org_id"], org["project_id"]
    heavy = "\n".join(f"path:a?a{i}/*a*a*b #payments" for i in range(499))
    with session_scope(stores) as session:
        create_team(session, org_id, "payments")
        project = session.get(Project, project_id)
        assert project is not None
        set_rules(session, org_id, project, heavy + "\npath:src/checkout/* #payments", actor="o@e.test")
        row = session.get(OwnershipRules, project_id)
        assert row is not None
        row.checked_until = row.checked_until - timedelta(minutes=30)
    # 256 distinct frames of 1,024 characters an event: the most the rules look at, each issue about a
    # second or more under 500 rules.
    frames = [("a/" * 600)[:1020] + f"{n:04d}" for n in range(256)]
    payloads = []
    for n in range(3):
        payload = event(frames[0], seconds_ago=30 - n * 10)
        stack = payload["exception"]["values"][0]["stacktrace"]
        stack["frames"] = [{"abs_path": f, "filename": f, "module": f} for f in frames]
        if n == 2:
            stack["frames"].append(
                {"abs_path": "/app/src/checkout/pay.py", "filename": "src/checkout/pay.py"}
            )
        payloads.append(payload)
    rows = land(org_id, project_id, payloads)
    client = get_warehouse(stores)
    looked, runs = 0, 0
    while looked < 3 and runs < 10:
        with session_scope(stores) as session:
            summary = assign_new_issues(session, client, org_budget_s=0.5)
        runs += 1
        looked += summary.looked_at
        assert summary.looked_at >= 1 or summary.deferred == 1, summary
    assert runs > 1  # one share of 0.5 s did not cover three issues of a second each
    with session_scope(stores) as session:
        found = assignees_of(session, org_id, project_id, [int(r["issue_id"]) for r in rows])
    assert [a.label for a in found.values()] == ["#payments"] and int(rows[2]["issue_id"]) in found


def test_rules_are_stored_with_newlines(stores: Settings, org_factory) -> None:
    """Issue 71: rules pasted from a Windows editor or a browser's textarea were stored with CRLF."""
    org = org_factory("Crlf")
    with session_scope(stores) as session:
        create_team(session, org["org_id"], "payments")
        project = session.get(Project, org["project_id"])
        assert project is not None
        set_rules(
            session,
            org["org_id"],
            project,
            "path:src/a/* #payments \r\npath:src/b/* #payments\r\n",
            actor="o@e.test",
        )
        assert (
            get_rules(session, org["org_id"], org["project_id"])
            == "path:src/a/* #payments\npath:src/b/* #payments"
        )
