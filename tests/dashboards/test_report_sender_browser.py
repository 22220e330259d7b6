"""A scheduled report, sent for real to a local webhook receiver, is named in the channels page's delivery log
by its dashboard and who subscribed ("Sent by: unknown" before, issue 70); the dashboard's subscription form
offers the shared channel and the member's own mail, never another member's report mail. Looked at in
Chromium at 1440 and 1024 px (screenshots in tests/_artifacts/dashboards)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from stacklens.alerts import outbox
from stacklens.control.channels import create_channel
from stacklens.control.db import session_scope
from stacklens.control.models import AlertChannel, Subscription, User
from stacklens.explore.dashboards import create_dashboard
from stacklens.explore.reports import send_due
from stacklens.explore.subscriptions import create_subscription
from stacklens.warehouse.client import get_warehouse
from tests.browser import shots_dir, sign_in_page, watch_errors
from tests.dashboards.conftest import PASSWORD
from tests.stacklens.alerts.receiver import Receiver

SHOTS = shots_dir("dashboards")


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_the_log_names_a_reports_sender(chromium, server, org_factory, stores, receiver) -> None:
    allowed = stores.model_copy(update={"outbound_allow": "127.0.0.1"})
    org = org_factory()
    with session_scope(allowed) as session:
        owner = session.scalars(select(User).where(User.email == org["email"])).one()
        board = create_dashboard(session, org["org_id"], {"name": "Vitals", "widgets": []})
        channel, secret = create_channel(
            session, org["org_id"], allowed, type="webhook", name="team", url=receiver.url
        )
        schedule = {"every": "day", "at": "08:00", "timezone": "UTC"}
        body = {
            "schedule": schedule,
            "format": "summary",
            "channel_id": channel.id,
            "target": {"dashboard_id": board.id},
        }
        create_subscription(session, org["org_id"], body, owner_user_id=owner.id)
        session.add(
            AlertChannel(org_id=org["org_id"], name="Reports to ann@acme.test", type="email", config={})
        )
        session.execute(update(Subscription).values(next_run_at=datetime.now(UTC) - timedelta(minutes=1)))
    receiver.secret = secret
    assert send_due(allowed, get_warehouse(allowed), "http://sl.test").sent == 1
    assert outbox.drain(allowed).delivered == 1 and len(receiver.received) == 1
    errors: list[str] = []
    # One page for both widths: a new context would load and compile plotly.js again (its cache is
    # the context's own) and sign in again, CPU for no check; each page is loaded anew at its width.
    page = chromium.new_page(viewport={"width": 1440, "height": 900})
    watch_errors(page, errors, with_url=True)
    sign_in_page(page, server, org["email"], PASSWORD, f"{server}/orgs/{org['org_slug']}")
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{server}/orgs/{org['org_slug']}/settings/channels")
        sent_by = page.locator("#deliveries .sent-by").first
        assert sent_by.get_attribute("data-sent-by") == "report"
        assert sent_by.inner_text().strip() == f"scheduled report: Vitals (subscribed by {org['email']})"
        page.screenshot(path=str(SHOTS / f"report-sender-{width}.png"), full_page=True)
        page.goto(f"{server}/orgs/{org['org_slug']}/dashboards/{board.id}#subscriptions")
        offered = page.locator("select[name=send_to] option").all_inner_texts()
        assert offered == [f"me ({org['email']})", "team"], offered
        page.locator("#subscriptions").screenshot(path=str(SHOTS / f"report-form-{width}.png"))
    page.close()
    assert errors == []
