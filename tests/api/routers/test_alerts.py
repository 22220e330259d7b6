"""Alerts API: channels (secret shown once, send test through the outbox), rules CRUD, deliveries; bad input
names the field; another organization's rule or channel answers 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.migrations import apply_migrations
from tests.stacklens.alerts.helpers import MailSink, start_smtp
from tests.stacklens.alerts.receiver import Receiver


@pytest.fixture
def allowed(settings: Settings) -> Settings:
    current = settings.model_copy(update={"outbound_allow": "127.0.0.1"})
    override_settings(current)
    return current


@pytest.fixture
def client(allowed: Settings) -> Iterator[TestClient]:
    apply_migrations(allowed, up_to=199)
    with TestClient(create_app(allowed)) as test_client:
        yield test_client


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def auth(org: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def test_webhook_channel_secret_once_and_send_test_shows_the_real_response(
    client, make_org, receiver
) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    created = client.post(
        "/api/alerts/channels",
        json={"type": "webhook", "name": "ops", "url": receiver.url},
        headers=auth(acme),
    )
    assert created.status_code == 201, created.text
    channel = created.json()
    assert channel["secret"].startswith("whsec_") and channel["health"] == "untested"
    receiver.secret = channel["secret"]
    listed = client.get("/api/alerts/channels", headers=auth(acme)).json()["channels"]
    assert [c["id"] for c in listed] == [channel["id"]] and "secret" not in listed[0]
    sent = client.post(f"/api/alerts/channels/{channel['id']}/test", headers=auth(acme)).json()
    assert sent["outcome"] == "delivered" and sent["status_code"] == 200 and sent["response"] == "ok"
    assert receiver.received[0].signature_ok and receiver.received[0].json()["type"] == "alert.test"
    receiver.answer(503)
    failed = client.post(f"/api/alerts/channels/{channel['id']}/test", headers=auth(acme)).json()
    assert failed["outcome"] == "retry" and failed["status_code"] == 503 and failed["next_retry_at"]
    log = client.get(f"/api/alerts/deliveries?channel_id={channel['id']}", headers=auth(acme)).json()
    assert [d["outcome"] for d in log["deliveries"]] == ["retry", "delivered"]
    assert {d["sent_by"] for d in log["deliveries"]} == {"test"}  # what sent it: the channel's test
    assert all(d["rule_id"] is None and d["rules"] == [] for d in log["deliveries"])
    assert client.post(f"/api/alerts/channels/{channel['id']}/test", headers=auth(other)).status_code == 404
    assert client.get("/api/alerts/deliveries", headers=auth(other)).json()["deliveries"] == []


def test_email_channel_against_a_refusing_smtp_server(client, make_org, allowed: Settings) -> None:
    sink = MailSink(refuse=True)
    controller = start_smtp(sink)
    try:
        override_settings(allowed.model_copy(update={"smtp_url": f"smtp://127.0.0.1:{controller.port}"}))
        client.app.state.settings = allowed.model_copy(
            update={"smtp_url": f"smtp://127.0.0.1:{controller.port}"}
        )
        acme = make_org("Acme")
        channel = client.post(
            "/api/alerts/channels",
            json={"type": "email", "name": "team", "to": ["a@acme.test"]},
            headers=auth(acme),
        ).json()
        sent = client.post(f"/api/alerts/channels/{channel['id']}/test", headers=auth(acme)).json()
        assert sent["outcome"] == "permanent" and sent["status_code"] == 550
        assert "refused every recipient" in sent["error"] and "mailbox unavailable" in sent["error"]
    finally:
        controller.stop()


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        ({"type": "webhook", "name": "x", "url": "not a url"}, "url: 'not a url' is not a valid"),
        (
            {"type": "webhook", "name": "x", "url": "http://10.0.0.1/h"},
            "url: 10.0.0.1 is a private address",
        ),
        ({"type": "pager", "name": "x"}, "type: unknown channel type 'pager'"),
        ({"type": "email", "name": "x", "to": ["nope"]}, "to: 'nope' is not an e-mail address"),
        ({"type": "slack", "name": "", "url": "https://hooks.slack.test/x"}, "name: give the channel a name"),
    ],
)
def test_bad_channel_input_names_the_field(client, make_org, body: dict, detail: str) -> None:
    answer = client.post("/api/alerts/channels", json=body, headers=auth(make_org("Acme")))
    assert answer.status_code == 400 and answer.json()["detail"].startswith(detail), answer.text


@pytest.mark.parametrize(
    ("kind", "url", "detail"),
    [
        ("webhook", "http://2130706433/h", "2130706433 means 127.0.0.1, a loopback address"),
        ("webhook", "http://0x7f000001/h", "0x7f000001 means 127.0.0.1, a loopback address"),
        ("slack", "https://127.1/services/x", "127.1 means 127.0.0.1, a loopback address"),
        ("webhook", "http://017700000001:8080/h", "017700000001 means 127.0.0.1, a loopback address"),
        (
            "webhook",
            "http://[::7f00:1]/h",
            "::7f00:1 is IPv4-compatible IPv6 for 127.0.0.1, a loopback address",
        ),
        (
            "webhook",
            "http://[::ffff:169.254.169.254]/latest/meta-data",
            "::ffff:169.254.169.254 is IPv4-mapped IPv6 for 169.254.169.254, a link-local address",
        ),
        (
            "slack",
            "https://[64:ff9b::a00:1]/x",
            "64:ff9b::a00:1 is NAT64 IPv6 for 10.0.0.1, a private address",
        ),
        (
            "webhook",
            "http://[2002:c0a8:101::]/h",
            "2002:c0a8:101:: is 6to4 IPv6 for 192.168.1.1, a private address",
        ),
        ("webhook", "http://localhost:9/h", "localhost means 127.0.0.1, a loopback address"),
    ],
)
def test_every_literal_form_of_an_internal_address_is_refused_at_creation(
    client, make_org, settings: Settings, kind: str, url: str, detail: str
) -> None:
    client.app.state.settings = settings  # no STACKLENS_OUTBOUND_ALLOW
    acme = make_org("Acme")
    answer = client.post(
        "/api/alerts/channels", json={"type": kind, "name": "x", "url": url}, headers=auth(acme)
    )
    assert answer.status_code == 400, answer.text
    assert answer.json()["detail"] == (
        f"url: {detail}; outbound calls never go to loopback, private, link-local, multicast and reserved "
        "addresses unless STACKLENS_OUTBOUND_ALLOW allows them"
    )
    assert client.get("/api/alerts/channels", headers=auth(acme)).json()["channels"] == []


def test_an_allowed_literal_form_is_stored_canonically_and_delivers(client, make_org, receiver) -> None:
    acme = make_org("Acme")
    typed = receiver.url.replace("127.0.0.1", "0x7f.1")
    created = client.post(
        "/api/alerts/channels", json={"type": "webhook", "name": "ops", "url": typed}, headers=auth(acme)
    )
    assert created.status_code == 201, created.text
    assert created.json()["target"] == receiver.url  # stored as the address it means
    receiver.secret = created.json()["secret"]
    sent = client.post(f"/api/alerts/channels/{created.json()['id']}/test", headers=auth(acme)).json()
    assert sent["outcome"] == "delivered" and receiver.received[0].signature_ok


def test_rules_crud_validation_and_isolation(client, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Other")
    body = {
        "name": "Checkout LCP",
        "type": "performance_budget",
        "project": acme["project"],
        "metric": "lcp_ms",
        "statistic": "p75",
        "threshold": 2500,
        "scope": "/checkout",
        "window": "7d",
        "min_samples": 20,
        "environment": "production",
        "channels": [],
    }
    created = client.post("/api/alerts/rules", json=body, headers=auth(acme))
    assert created.status_code == 201, created.text
    rule = created.json()
    assert rule["window"] == "7d" and rule["threshold"] == 2500 and rule["states"] == []
    for change, detail in [
        ({"metric": "fcp"}, "metric: unknown metric 'fcp'"),
        ({"threshold": "fast"}, "threshold: must be a number (got 'fast')"),
        ({"window": "soon"}, "window: 'soon' is not a window"),
        ({"channels": [12345]}, "channels: no channel 12345"),
    ]:
        answer = client.post("/api/alerts/rules", json={**body, **change}, headers=auth(acme))  # type: ignore[dict-item]
        assert answer.status_code == 400 and answer.json()["detail"].startswith(detail), answer.text
    assert client.post("/api/alerts/rules", json=[1], headers=auth(acme)).status_code == 400
    assert (
        client.post("/api/alerts/rules", json={**body, "project": acme["project"]}, headers=auth(other))
        .json()["detail"]
        .startswith("project: no project")
    )
    url = f"/api/alerts/rules/{rule['id']}"
    assert client.get(url, headers=auth(other)).status_code == 404
    assert client.put(url, json=body, headers=auth(other)).status_code == 404
    changed = client.put(url, json={**body, "threshold": 3000, "resolve_threshold": 2800}, headers=auth(acme))
    assert changed.status_code == 200 and changed.json()["resolve_threshold"] == 2800
    assert [r["id"] for r in client.get("/api/alerts/rules", headers=auth(acme)).json()["rules"]] == [
        rule["id"]
    ]
    assert client.get("/api/alerts/rules", headers=auth(other)).json()["rules"] == []
    assert client.delete(url, headers=auth(other)).status_code == 404
    assert client.delete(url, headers=auth(acme)).status_code == 204
    assert client.get(url, headers=auth(acme)).status_code == 404


def test_release_health_rules_through_the_api(client, make_org) -> None:
    acme = make_org("Acme")
    body = {"name": "Crash-free", "type": "crash_free_rate", "project": acme["project"], "threshold": 99.5}
    created = client.post(
        "/api/alerts/rules", json={**body, "metric": "crash_free_users"}, headers=auth(acme)
    )
    assert created.status_code == 201, created.text
    got = created.json()
    assert (got["type"], got["metric"], got["threshold"], got["window"], got["min_samples"]) == (
        "crash_free_rate",
        "crash_free_users",
        99.5,
        "1d",
        100,
    )
    regression = {"name": "Regressions", "type": "release_regression", "project": acme["project"]}
    made = client.post("/api/alerts/rules", json=regression, headers=auth(acme))
    assert made.status_code == 201 and made.json()["window"] == "30d" and made.json()["threshold"] is None
    cases: list[tuple[dict[str, Any], str]] = [
        ({"threshold": None}, "threshold: is required for this rule type"),
        ({"threshold": 120}, "threshold: must be at most 100"),
        (
            {"metric": "lcp_ms"},
            "metric: a crash-free rate rule watches crash_free_sessions or crash_free_users",
        ),
        ({"warning_threshold": 99}, "warning_threshold: must be above the threshold"),
        ({"resolve_threshold": 99}, "resolve_threshold: must be at least the threshold"),
        ({"release": "shop@1.0.0"}, "release: a crash-free rate rule watches the newest release's sessions"),
    ]
    for change, detail in cases:
        answer = client.post("/api/alerts/rules", json={**body, **change}, headers=auth(acme))
        assert answer.status_code == 400 and answer.json()["detail"].startswith(detail), answer.text


def test_rule_from_a_budget(client, make_org) -> None:
    acme = make_org("Acme")
    budget = client.post(
        f"/api/projects/{acme['project']}/budgets",
        json={"metric": "api_p95_ms", "value": 800},
        headers=auth(acme),
    ).json()
    rule = client.post("/api/alerts/rules", json={"budget_id": budget["id"]}, headers=auth(acme))
    assert rule.status_code == 201, rule.text
    got = rule.json()
    assert (got["metric"], got["statistic"], got["threshold"], got["budget_id"]) == (
        "api_ms",
        "p95",
        800,
        budget["id"],
    )
