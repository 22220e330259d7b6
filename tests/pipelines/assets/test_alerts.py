"""The alerts asset group in the real pipelines: a merged run refreshes the performance states, evaluates the
rules after them and delivers the outbox to a real receiver."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from pipelines.definitions import definitions_for
from pipelines.embedded import materialize_now
from stacklens.alerts import rules
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.settings import override_settings
from tests.pipelines.pipeline_seed import TX_COLS
from tests.stacklens.alerts.helpers import org_with_project
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.performance.budget_seed import bucketed


def _row(project_id: int, ms: float, at: datetime) -> list[object]:
    row = {
        "org_id": 1,
        "project_id": project_id,
        "event_id": uuid.uuid4(),
        "timestamp": at,
        "end_timestamp": at + timedelta(milliseconds=ms),
        "received_at": datetime.now(UTC),
        "release": "3.1.0",
        "op": "pageload",
        "duration_ms": ms,
        "page": "/checkout",
        "http_method": "",
        "http_status": 0,
        "measurements": {"lcp": ms},
        "transaction": "/checkout",
    }
    return [row[c] for c in TX_COLS]


def test_merged_run_evaluates_after_the_marts_and_delivers(client, instance, settings) -> None:
    allowed = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    override_settings(allowed)
    receiver = Receiver().start()
    try:
        org_id, project_id, slug = org_with_project(allowed)
        with session_scope(allowed) as session:
            channel, receiver.secret = create_channel(
                session, org_id, allowed, type="webhook", name="ops", url=receiver.url
            )
            rule = rules.create_rule(
                session,
                org_id,
                {
                    "name": "Slow checkout",
                    "type": "performance_budget",
                    "project": slug,
                    "metric": "lcp_ms",
                    "statistic": "p75",
                    "threshold": 2500,
                    "window": "1h",
                    "min_samples": 3,
                    "channels": [channel.id],
                },
            )
        now = datetime.now(UTC)
        client.insert(
            "transactions",
            [_row(project_id, 4000, now - timedelta(minutes=m)) for m in (1, 2, 3, 4)],
            column_names=TX_COLS,
        )
        outcomes = materialize_now(
            definitions_for(allowed), instance, ["pageload_periods", "alert_evaluations"]
        )
        assert all(o.success for o in outcomes), [o.error for o in outcomes]
        assert {o.job for o in outcomes} >= {"performance_job", "alerts_job"}
        alerts = next(o for o in outcomes if o.job == "alerts_job")
        assert len({o.run_id for o in outcomes}) == 1  # one merged run: the states first, then the alerts
        assert alerts.assets["alert_evaluations"] == 1 and alerts.assets["alert_deliveries"] == 1
        (got,) = receiver.received
        assert got.signature_ok and got.json()["data"]["rule_id"] == rule.id
        assert got.json()["data"]["value"] == bucketed(4000) and got.json()["data"]["release"] == "3.1.0"
    finally:
        receiver.stop()


def test_the_alerts_job_assigns_new_issues_by_the_ownership_rules(client, instance, settings) -> None:
    """`issue_owners` runs in the alerts job: a new issue matching a project's rule is assigned by `system`,
    and `person_digests` runs before the deliveries."""
    from stacklens.control import accounts
    from stacklens.control.models import Project
    from stacklens.issues.assignees import assignees_of
    from stacklens.issues.auto_assign import set_rules
    from tests.dashboards.landing import land
    from tests.stacklens.issues.test_auto_assign import event

    org_id, project_id, _ = org_with_project(settings)
    with session_scope(settings) as session:
        accounts.add_member(session, org_id, "lead@acme.test", "a-long-password-1")
        project = session.get(Project, project_id)
        assert project is not None
        set_rules(session, org_id, project, "path:src/search/* lead@acme.test", actor="owner@acme.test")
    (row,) = land(org_id, project_id, [event("/app/src/search/find.py")])
    outcomes = materialize_now(definitions_for(settings), instance, ["issue_owners"])
    assert all(o.success for o in outcomes), [o.error for o in outcomes]
    alerts = next(o for o in outcomes if o.job == "alerts_job")
    assert (
        alerts.assets["issue_owners"] == 1 and alerts.assets["person_digests"] == 0
    )  # assigned; no digest due
    with session_scope(settings) as session:
        found = assignees_of(session, org_id, project_id, [int(row["issue_id"])])
    assert [(a.label, a.assigned_by) for a in found.values()] == [("lead@acme.test", "system")]


def test_one_organizations_hostile_frames_do_not_hold_anothers_new_issue_alert(
    client, instance, settings
) -> None:
    """The probe of issue 62: organization A has 21 `path:` rules and three events whose frames carry a
    120,000-character path; organization B's new-issue alert reaches its webhook within 90 s of the run's
    start (before: the ownership step matched A's frames for more than 12 minutes first)."""
    import time

    from stacklens.control.models import OwnershipRules, Project
    from stacklens.control.teams import create_team
    from stacklens.issues.auto_assign import set_rules
    from tests.dashboards.landing import land
    from tests.stacklens.issues.test_auto_assign import event
    from tests.stacklens.issues.test_ownership import PROBE_RULES

    allowed = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    override_settings(allowed)
    receiver = Receiver().start()
    try:
        org_a, project_a, _ = org_with_project(allowed, "Initech")
        org_b, project_b, slug_b = org_with_project(allowed, "Globex")
        with session_scope(allowed) as session:
            create_team(session, org_a, "owners")
            project = session.get(Project, project_a)
            assert project is not None
            set_rules(session, org_a, project, PROBE_RULES, actor="owner@initech.test")
            channel, receiver.secret = create_channel(
                session, org_b, allowed, type="webhook", name="ops", url=receiver.url
            )
            rule = rules.create_rule(
                session,
                org_b,
                {
                    "name": "New errors",
                    "type": "new_issue",
                    "project": slug_b,
                    "level": "error",
                    "window": "1h",
                    "channels": [channel.id],
                },
            )
        long_path = "/".join(["a"] * 60_000)  # 119,999 characters, a "/" at every other one
        hostile = land(org_a, project_a, [event(long_path + str(n)) for n in range(3)])
        assert all(long_path in row["payload"] for row in hostile)  # stored as sent
        land(org_b, project_b, [event("/app/src/api/orders.py")])

        started = time.monotonic()
        outcomes = materialize_now(definitions_for(allowed), instance, ["issues", "issue_owners"])
        assert all(o.success for o in outcomes), [o.error for o in outcomes]
        (got,) = receiver.received
        assert got.signature_ok and got.json()["data"]["rule_id"] == rule.id
        assert receiver.arrival_times[0] - started < 90
        alerts = next(o for o in outcomes if o.job == "alerts_job")
        assert alerts.assets["issue_owners"] == 0  # A's frames were matched (none of the rules fits them)
        with session_scope(allowed) as session:
            row = session.get(OwnershipRules, project_a)
            assert row is not None and row.checked_until.replace(tzinfo=UTC) > datetime.now(UTC) - timedelta(
                minutes=5
            )
    finally:
        receiver.stop()
