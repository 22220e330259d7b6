"""Where a per-item failure of a periodic loop is shown, through the real app: a tracker link whose look-up
was answered with a JSON list (the issue page and the links API), a channel whose receiver broke (the
channels page's delivery log and the deliveries API), a budget that cannot be evaluated (the budgets page and
the budgets API), and an alert rule whose evaluation failed (the rule page and the rules API)."""

from __future__ import annotations

from collections.abc import Iterator
from html import unescape
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.alerts import outbox, rules
from stacklens.alerts.evaluation import evaluate
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.integrations import create_connection
from stacklens.control.models import Budget
from stacklens.control.models.alerts import AlertRule
from stacklens.control.models.integrations import ExternalLink
from stacklens.integrations.sync import sync_states
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import sign_in
from tests.dashboards.landing import land, sdk_event
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers


@pytest.fixture
def allowed(stores: Settings) -> Iterator[Settings]:
    current = stores.model_copy(update={"outbound_allow": "127.0.0.1"})
    override_settings(current)
    yield current
    override_settings(None)


@pytest.fixture
def web(allowed: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(allowed)) as test_client:
        yield test_client


@pytest.fixture
def fake() -> Iterator[FakeTrackers]:
    server = FakeTrackers().start()
    yield server
    server.stop()


def _fail() -> None:
    raise KeyError("cart")


def _text(html: str) -> str:
    return unescape(html)


def test_each_items_error_is_shown_on_its_page(
    web: TestClient, org_factory, allowed: Settings, fake: FakeTrackers
) -> None:
    org: dict[str, Any] = org_factory("Acme")
    api = {"Authorization": f"Bearer {org['api_key']}"}
    sign_in(web, org["email"])
    project_path = f"/orgs/{org['org_slug']}/projects/{org['project']}"

    # A link whose tracker answered the look-up with a JSON list.
    (event,) = land(org["org_id"], org["project_id"], [sdk_event(_fail)])
    issue = int(event["issue_id"])
    fake.tickets["acme/web#1"] = {
        "key": "acme/web#1",
        "title": "t",
        "body": "",
        "state": "open",
        "target": "x",
    }
    fake.answers["/api/v3/repos/acme/web/issues/1"] = [{"number": 1}]
    with session_scope(allowed) as session:
        body = {"type": "github", "name": "Web", "base_url": fake.url, "token": ft.GITHUB_TOKEN}
        connection = create_connection(session, org["org_id"], allowed, body)
        session.add(
            ExternalLink(
                org_id=org["org_id"],
                project_id=org["project_id"],
                issue_id=issue,
                connection_id=connection.id,
                target="acme/web",
                state="linked",
                marker="",
                ticket_key="acme/web#1",
                ticket_url="https://github.example.com/acme/web/issues/1",
                ticket_state="open",
            )
        )
    assert sync_states(allowed, get_warehouse(allowed)).failed == 1
    words = "GitHub answered issue acme/web#1 with a JSON list where an object was expected"
    page = _text(web.get(f"{project_path}/issues/{issue}").text)
    assert "last check failed: " + words in page and "next attempt" in page
    (link,) = web.get(f"/api/issues/{issue}/external-links", headers=api).json()["links"]
    assert words in link["last_error"] and link["retry_at"]

    # A channel whose receiver answers something that cannot be read.
    receiver = Receiver().start()
    try:
        with session_scope(allowed) as session:
            channel, receiver.secret = create_channel(
                session, org["org_id"], allowed, type="webhook", name="ops hook", url=receiver.url
            )
            outbox.enqueue(session, org["org_id"], [channel.id], "firing", {"subject": "s", "text": "t"})
        receiver.answer(200, {"content-encoding": "gzip"})
        outbox.drain(allowed)
    finally:
        receiver.stop()
    page = _text(web.get(f"/orgs/{org['org_slug']}/settings/channels").text)
    assert "the receiver's answer cannot be read" in page
    (delivery,) = web.get("/api/alerts/deliveries", headers=api).json()["deliveries"]
    assert (
        delivery["outcome"] == "retry" and "cannot be read" in delivery["error"] and delivery["next_retry_at"]
    )

    # A budget that cannot be evaluated (a statistic no metric keeps).
    with session_scope(allowed) as session:
        session.add(
            Budget(
                org_id=org["org_id"],
                project_id=org["project_id"],
                metric="load_time_ms",
                scope="*",
                value=3000,
                statistic="p42",
            )
        )
    page = _text(web.get(f"{project_path}/performance/budgets").text)
    assert 'data-status="error"' in page and "not evaluated" in page and "'p42'" in page
    (budget,) = web.get(f"/api/projects/{org['project']}/budgets", headers=api).json()["budgets"]
    assert budget["status"] == "error" and "'p42'" in budget["error"]

    # An alert rule whose evaluation raised.
    with session_scope(allowed) as session:
        rule = rules.create_rule(
            session,
            org["org_id"],
            {
                "name": "LCP",
                "type": "performance_budget",
                "project": org["project"],
                "metric": "lcp_ms",
                "statistic": "p75",
                "threshold": 2500,
                "window": "1h",
            },
        )
        rule.statistic = "p42"
        rule_id = rule.id
    assert evaluate(allowed, get_warehouse(allowed), "http://sl.test").failed == 1
    page = _text(web.get(f"/orgs/{org['org_slug']}/alerts/{rule_id}").text)
    assert "The last evaluation failed" in page and "'p42'" in page and "next attempt" in page
    assert "evaluation failed: " in page  # the evaluation row in the rule's history
    shown = web.get(f"/api/alerts/rules/{rule_id}", headers=api).json()
    assert "'p42'" in shown["last_error"] and shown["retry_at"]
    with session_scope(allowed) as session:
        assert session.scalars(select(AlertRule.failures).where(AlertRule.id == rule_id)).one() == 1
