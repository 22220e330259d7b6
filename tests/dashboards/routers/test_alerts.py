"""Alert pages: channels (secret once, send test with the real response, paused warning, delivery log), New
Rule with field-named errors, the rule page with evaluations and the 30-day preview; members read only; other
organizations get 404."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from stacklens.alerts.evaluation import evaluate
from stacklens.control.db import session_scope
from stacklens.control.models import utcnow
from stacklens.control.models.alerts import AlertChannel
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.conftest import add_member, csrf_of, sign_in
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.alerts.test_evaluation import _load, tx
from tests.stacklens.performance.budget_seed import bucketed


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def allowed(client, stores):
    current = stores.model_copy(update={"outbound_allow": "127.0.0.1"})
    client.app.state.settings = current
    return current


def test_channels_page_create_test_and_log(client, org_factory, allowed, receiver) -> None:
    org = org_factory()
    sign_in(client, org["email"])
    path = f"/orgs/{org['org_slug']}/settings/channels"
    page = client.get(path)
    assert page.status_code == 200 and "No channel yet" in page.text
    token = csrf_of(page.text)
    bad = client.post(path, data={"type": "webhook", "name": "ops", "url": "ftp://x", "csrf_token": token})
    assert bad.status_code == 400 and "url: &#39;ftp://x&#39; is not a valid" in bad.text
    private = client.post(
        path, data={"type": "webhook", "name": "ops", "url": "http://0xa000001/h", "csrf_token": token}
    )
    assert private.status_code == 400 and "url: 0xa000001 means 10.0.0.1, a private address" in private.text
    made = client.post(
        path, data={"type": "webhook", "name": "ops", "url": receiver.url, "csrf_token": token}
    )
    secret = re.search(r"<code>(whsec_[^<]+)</code>", made.text).group(1)
    receiver.secret = secret
    assert secret not in client.get(path).text  # shown once
    channel_id = int(re.search(r"/settings/channels/(\d+)/test", made.text).group(1))
    tested = client.post(f"{path}/{channel_id}/test", data={"csrf_token": token})
    assert "Test delivered — status 200" in tested.text and "response: <code>ok</code>" in tested.text
    assert receiver.received[0].signature_ok
    assert 'class="outcome-delivered">delivered' in tested.text and "health-healthy" in tested.text
    with session_scope(allowed) as session:
        session.execute(
            update(AlertChannel).values(paused_at=utcnow(), pause_reason="the receiver answered 410")
        )
    assert (
        "ops is paused: paused after repeated permanent failures: the receiver answered 410"
        in client.get(path).text
    )
    resumed = client.post(f"{path}/{channel_id}/resume", data={"csrf_token": token})
    assert "is paused" not in resumed.text


def test_new_rule_form_errors_rule_page_and_isolation(client, org_factory, allowed, stores) -> None:
    org, other = org_factory(), org_factory("Other")
    sign_in(client, org["email"])
    alerts = f"/orgs/{org['org_slug']}/alerts"
    assert "No alert rules yet" in client.get(alerts).text
    form = client.get(alerts + "/new")
    assert form.status_code == 200 and "New Rule" in form.text
    token = csrf_of(form.text)
    data = {
        "csrf_token": token,
        "name": "Slow pages",
        "type": "performance_budget",
        "project": org["project"],
        "metric": "load_time_ms",
        "statistic": "p75",
        "scope": "*",
        "threshold": "fast",
        "window": "1h",
        "min_samples": "2",
    }
    bad = client.post(alerts + "/new", data=data)
    assert bad.status_code == 400 and "threshold: must be a number (got &#39;fast&#39;)" in bad.text
    made = client.post(alerts + "/new", data={**data, "threshold": "1000"}, follow_redirects=False)
    assert made.status_code == 303
    rule_path = made.headers["location"]
    assert "Not evaluated yet" in client.get(rule_path).text
    now = datetime.now(UTC)
    _load(
        get_warehouse(stores), [tx(org["project_id"], 2500, now - timedelta(minutes=m)) for m in range(1, 4)]
    )
    evaluate(stores, get_warehouse(stores), "http://sl.test")
    page = client.get(rule_path)
    assert (
        f"firing: {bucketed(2500):,.1f} ms &gt; 1,000.0 ms" in page.text
        and 'id="rule-state">firing' in page.text
    )
    assert (
        'data-figure="preview-json"' in page.text and 'id="preview-scope">Evaluated on all pages' in page.text
    )
    listed = client.get(alerts).text
    assert "Slow pages" in listed and "state-firing" in listed
    member = add_member(stores, org)
    client.cookies.clear()
    sign_in(client, member)
    assert client.get(rule_path).status_code == 200
    assert client.get(alerts + "/new").status_code == 403
    client.cookies.clear()
    sign_in(client, other["email"])
    assert client.get(rule_path).status_code == 404
    assert client.get(rule_path.replace(org["org_slug"], other["org_slug"])).status_code == 404


def test_a_quiet_per_issue_rule_shows_its_latest_evaluation(client, org_factory, allowed, stores) -> None:
    # A frequency rule whose issues stay within the threshold keeps no state row (one shared evaluation row
    # per tick): the list said "not evaluated yet" while the rule page listed an evaluation each minute.
    from tests.dashboards.landing import land, sdk_event

    org = org_factory()
    sign_in(client, org["email"])
    alerts = f"/orgs/{org['org_slug']}/alerts"
    form = client.get(alerts + "/new")
    data = {
        "csrf_token": csrf_of(form.text),
        "name": "Busy issue",
        "type": "event_frequency",
        "project": org["project"],
        "threshold": "100",
        "window": "1h",
    }
    made = client.post(alerts + "/new", data=data, follow_redirects=False)
    assert made.status_code == 303, made.text
    assert "not evaluated yet" in client.get(alerts).text
    land(org["org_id"], org["project_id"], [sdk_event(lambda: 1 / 0)])
    evaluate(stores, get_warehouse(stores), "http://sl.test")
    listed = client.get(alerts).text
    assert "not evaluated yet" not in listed and "state-ok" in listed and "evaluated " in listed
    page = client.get(made.headers["location"]).text
    assert 'id="rule-state">ok' in page and "issue(s) within the threshold" in page
