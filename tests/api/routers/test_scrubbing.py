"""Data scrubbing rules over real HTTP: `GET/PUT /api/projects/{slug}/scrubbing` checks every rule (a bad
selector or pattern is a 400 naming the rule's index and field, nothing saved; another organization gets 404);
secrets planted by sentry-python (an e-mail in a tag, the user and a message, a card number, a bearer token, a
password field, a customer id matched by a pattern, a session's user and address) never reach the
warehouse's rows, the API, a page, an event download (CSV), the logs export or an agent's MCP tool answer,
nor do an OpenTelemetry span's attributes and exception; a preview shows what rules would change in a
stored event."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from stacklens.settings import Settings, override_settings
from tests.api.agents.test_door import run_calls, text_of
from tests.api.live import serve
from tests.conftest import make_settings
from tests.dashboards.conftest import PASSWORD, sign_in

SDK_SCRIPT = """
import sys, sentry_sdk
from sentry_sdk import logger as sentry_logger
sentry_sdk.init(dsn=sys.argv[1], release="shop@1.0.0", enable_logs=True, send_default_pii=True)
sentry_sdk.set_user({"id": "cust_77731", "email": "jane.doe@example.com", "ip_address": "203.0.113.9"})
sentry_sdk.set_tag("customer_email", "jane.doe@example.com")
sentry_sdk.set_extra("customer_ref", "cust_77731")
sentry_sdk.set_extra("payment", {"card": "4111 1111 1111 1111", "password": "hunter2-planted"})
sentry_sdk.set_extra("upstream", "Bearer plantedToken123abc")
def checkout(card_number, secret_word):
    raise ValueError("charge failed for jane.doe@example.com with Bearer plantedToken123abc")
try:
    checkout("4111111111111111", "hunter2-planted")
except ValueError:
    print(sentry_sdk.capture_exception())
sentry_logger.error("refund for {email} failed", email="jane.doe@example.com")
with sentry_sdk.isolation_scope() as scope:  # release health: a session whose user is the e-mail
    scope.set_user({"email": "jane.doe@example.com", "ip_address": "203.0.113.9"})
    scope.start_session(session_mode="application")
    scope.end_session()
sentry_sdk.flush(30)
"""
PLANTED = (
    "jane.doe",
    "4111 1111 1111 1111",
    "4111111111111111",
    "hunter2-planted",
    "plantedToken123abc",
    "77731",
)
RULES = [
    {"method": "mask", "type": "email", "applies_to": "$string"},
    {"method": "mask", "type": "bearer", "applies_to": "$string"},
    {"method": "hash", "type": "pattern", "pattern": r"cust_(\d+)", "applies_to": "$string"},
    {"method": "remove", "type": "password", "applies_to": "**"},
    {"method": "mask", "type": "credit_card", "applies_to": "$string"},
    {"method": "remove", "type": "ip", "applies_to": "user.ip_address"},
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[dict[str, Any]]:
    from stacklens.control import accounts
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.projects import create_project
    from stacklens.ingest.front_door import close_front_doors
    from stacklens.warehouse.client import reset_clients
    from stacklens.warehouse.migrations import apply_migrations

    settings: Settings = make_settings(tmp_path_factory.mktemp("scrubbing") / "data", warehouse_url)
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    override_settings(settings)
    migrate_control_store(settings)
    apply_migrations(settings)
    orgs = []
    with session_scope(settings) as session:
        for name in ("Scrub Shop", "Other Shop"):
            email = f"owner@{name.split()[0].lower()}.test"
            org, api_key = accounts.create_organization(session, name, email, PASSWORD)
            project, app_key = create_project(session, org.id, "Checkout")
            orgs.append(
                {"org_slug": org.slug, "email": email, "api_key": api_key, "slug": project.slug}
                | {"project_id": project.id, "app_key": app_key}
            )
    try:
        with serve(settings) as url:
            yield {"url": url, "org": orgs[0], "other": orgs[1], "settings": settings}
    finally:
        close_front_doors()
        reset_clients()
        override_settings(None)


def _api(live: dict[str, Any], org: dict[str, Any] | None = None) -> httpx.Client:
    key = (org or live["org"])["api_key"]
    return httpx.Client(base_url=live["url"], headers={"Authorization": f"Bearer {key}"}, timeout=60)


def test_rules_are_checked_before_anything_is_saved(live: dict[str, Any]) -> None:
    slug = live["org"]["slug"]
    with _api(live) as api:
        empty = api.get(f"/api/projects/{slug}/scrubbing").json()
        assert empty["rules"] == [] and any("card numbers" in line for line in empty["built_in"])
        saved = api.put(f"/api/projects/{slug}/scrubbing", json={"rules": RULES})
        assert saved.status_code == 200, saved.text
        assert [r["type"] for r in saved.json()["rules"]] == [r["type"] for r in RULES]
        bad_selector = [RULES[0], {"method": "mask", "type": "email", "applies_to": "extra.&&"}]
        refused = api.put(f"/api/projects/{slug}/scrubbing", json={"rules": bad_selector})
        assert refused.status_code == 400 and "rules[1].applies_to" in refused.json()["detail"], refused.text
        bad_pattern = [{"method": "hash", "type": "pattern", "pattern": "(a", "applies_to": "$string"}]
        refused = api.put(f"/api/projects/{slug}/scrubbing", json={"rules": bad_pattern})
        assert refused.status_code == 400 and "rules[0].pattern" in refused.json()["detail"], refused.text
        refused = api.put(
            f"/api/projects/{slug}/scrubbing", json={"rules": [{"method": "zap", "type": "ip"}]}
        )
        assert refused.status_code == 400 and "rules.0.method" in refused.json()["detail"], refused.text
        assert len(api.get(f"/api/projects/{slug}/scrubbing").json()["rules"]) == len(RULES)  # unchanged
    with _api(live, live["other"]) as other:
        assert other.get(f"/api/projects/{slug}/scrubbing").status_code == 404
        assert other.put(f"/api/projects/{slug}/scrubbing", json={"rules": []}).status_code == 404


def _wait_json(client: httpx.Client, path: str, ready: Any) -> Any:
    deadline = time.monotonic() + 60
    while True:
        answer = client.get(path)
        if answer.status_code == 200 and ready(answer.json()):
            return answer.json()
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.3)


def _session_rows(live: dict[str, Any]) -> list[tuple[Any, ...]]:
    """Every column of the release-health rows the planted script left (straight from the warehouse)."""
    from stacklens.warehouse.client import get_warehouse

    deadline = time.monotonic() + 60
    while True:
        rows = (
            get_warehouse(live["settings"])
            .query(
                "SELECT distinct_id, user_agent, * FROM sessions WHERE project_id = {project:UInt64}",
                parameters={"project": live["org"]["project_id"]},
            )
            .result_rows
        )
        if rows or time.monotonic() > deadline:
            return list(rows)
        time.sleep(0.3)


def test_planted_secrets_never_reach_the_api_a_page_or_an_export(live: dict[str, Any]) -> None:
    org, url = live["org"], live["url"]
    with _api(live) as api:
        api.put(f"/api/projects/{org['slug']}/scrubbing", json={"rules": RULES}).raise_for_status()
        dsn = url.replace("http://", f"http://{org['app_key']}@") + f"/{org['project_id']}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("SENTRY_")}
        sent = subprocess.run(
            [sys.executable, "-c", SDK_SCRIPT, dsn], capture_output=True, text=True, timeout=90, env=env
        )
        assert sent.returncode == 0, sent.stderr
        event_id = sent.stdout.split()[0]
        event = _wait_json(api, f"/api/events/{event_id}", lambda body: True)
        logs_path = f"/api/projects/{org['slug']}/logs"
        logs = _wait_json(api, logs_path, lambda body: body["rows"])
        releases_path = f"/api/projects/{org['slug']}/releases"
        releases = _wait_json(api, releases_path, lambda body: "shop@1.0.0" in str(body))
        texts = {
            "event": api.get(f"/api/events/{event_id}").text,
            "issues": api.get(f"/api/projects/{org['slug']}/issues").text,
            "logs": str(logs),
            "logs.csv": api.get(logs_path, params={"format": "csv"}).text,
            "releases": str(releases),
            "sessions rows": str(_session_rows(live)),
        }
        preview = api.post(f"/api/projects/{org['slug']}/scrubbing/preview", json={"event_id": event_id})
    payload = event["payload"]
    # What the rules left: masked e-mails, a hashed customer id (the same hash wherever it was), no IP.
    assert (
        payload["tags"]["customer_email"] == "*" * len("jane.doe@example.com")
        or [
            "customer_email",
            "*" * len("jane.doe@example.com"),
        ]
        in payload["tags"]
    )
    hashed = re.fullmatch(r"cust_([0-9a-f]{16})", payload["extra"]["customer_ref"])
    assert hashed and payload["user"]["id"] == payload["extra"]["customer_ref"]
    assert "ip_address" not in payload["user"]
    # The session's user (the e-mail, as sentry-python sends it when the user has no id) is masked as the
    # e-mail is anywhere else; the address is never kept.
    session_rows = _session_rows(live)
    assert [row[0] for row in session_rows] == ["*" * len("jane.doe@example.com")]
    assert "203.0.113.9" not in str(session_rows)
    assert "*" * len("plantedToken123abc") in payload["extra"]["upstream"]
    # Saved rules previewed on what they stored: masks and removals have nothing left to change; a hash may
    # be hashed again (its digits match `cust_(\d+)` once more).
    assert preview.status_code == 200
    assert {c["path"] for c in preview.json()["changes"]} <= {"user.id", "extra.customer_ref"}

    with httpx.Client(base_url=url, timeout=60) as browser:
        sign_in(browser, org["email"])  # httpx.Client is what TestClient is
        issue = f"/orgs/{org['org_slug']}/projects/{org['slug']}/issues/{event['issue_id']}"
        texts["issue page"] = browser.get(issue).text
        texts["event page"] = browser.get(issue, params={"event": event_id}).text
        texts["event.csv"] = browser.get(f"{issue}/events/{event_id}.csv").text
        texts["event.json"] = browser.get(f"{issue}/events/{event_id}.json").text
        texts["issue list"] = browser.get(f"/orgs/{org['org_slug']}/projects/{org['slug']}/issues").text
        texts["logs page"] = browser.get(f"/orgs/{org['org_slug']}/projects/{org['slug']}/logs").text
        texts["releases page"] = browser.get(f"/orgs/{org['org_slug']}/projects/{org['slug']}/releases").text
    # What an agent reads through /mcp (the official mcp client, a personal token of the owner).
    with _api(live) as api:
        token = api.post(
            "/api/tokens",
            json={"name": "scrub", "scopes": ["read"], "expires_in_days": 1, "member": org["email"]},
        )
    assert token.status_code == 201, token.text
    calls = [
        ("get_issue", {"issue_id": event["issue_id"]}),
        ("get_event", {"event_id": event_id}),
        ("search_logs", {"project": org["slug"]}),
    ]
    for (name, _), answer in zip(calls, run_calls(url, token.json()["token"], calls)[1:], strict=True):
        assert not answer.is_error, text_of(answer)
        texts[f"mcp {name}"] = text_of(answer)
    assert "charge failed for" in texts["mcp get_issue"] and "refund for" in texts["mcp search_logs"]
    assert "charge failed for" in texts["issue page"] and "refund for" in texts["logs page"]
    assert "charge failed for" in texts["event page"]  # the event's own page, not a "not found"
    assert hashed.group(1) in texts["event.csv"]
    leaks = [(where, secret) for where, text in texts.items() for secret in PLANTED if secret in text]
    assert leaks == []


def test_a_preview_shows_what_unsaved_rules_would_change(live: dict[str, Any]) -> None:
    org = live["org"]
    with _api(live) as api:
        issues = _wait_json(api, f"/api/projects/{org['slug']}/issues", lambda body: body["issues"])["issues"]
        event_id = api.get(f"/api/issues/{issues[0]['id']}/events").json()["events"][0]["event_id"]
        rules = [
            {"method": "mask", "type": "pattern", "pattern": "charge (failed)", "applies_to": "$error.value"}
        ]
        path = f"/api/projects/{org['slug']}/scrubbing/preview"
        answer = api.post(path, json={"event_id": event_id, "rules": rules})
        assert answer.status_code == 200, answer.text
        changes = answer.json()["changes"]
        assert [c["path"] for c in changes] == ["exception.values.0.value"]
        assert changes[0]["after"].startswith("charge ****** for")
        assert answer.json()["after"]["exception"]["values"][0]["value"] == changes[0]["after"]
        assert api.post(path, json={"event_id": "0" * 32}).status_code == 404
        bad = api.post(path, json={"event_id": event_id, "rules": [{**rules[0], "applies_to": "$nope"}]})
        assert bad.status_code == 400 and "rules[0].applies_to" in bad.json()["detail"]
    with _api(live, live["other"]) as other:
        assert other.post(path, json={"event_id": event_id}).status_code == 404


def test_otlp_span_attributes_and_exceptions_are_scrubbed(live: dict[str, Any]) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind

    org, url = live["org"], live["url"]
    with _api(live) as api:
        api.put(f"/api/projects/{org['slug']}/scrubbing", json={"rules": RULES}).raise_for_status()
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "otel-shop"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("shop")
    with tracer.start_as_current_span("GET /refunds", kind=SpanKind.SERVER) as root:
        root.set_attribute("customer.email", "jane.doe@example.com")
        with tracer.start_as_current_span("charge") as child:
            child.set_attribute("customer.ref", "cust_77731")
            child.record_exception(LookupError("no card on file for jane.doe@example.com"))
    exporter = OTLPSpanExporter(
        endpoint=f"{url}/api/{org['project_id']}/otlp/v1/traces",
        headers={"x-stacklens-app-key": org["app_key"]},
    )
    assert exporter.export(memory.get_finished_spans()) == SpanExportResult.SUCCESS
    trace_id = format(root.get_span_context().trace_id, "032x")
    with _api(live) as api:
        trace = _wait_json(api, f"/api/traces/{trace_id}", lambda body: "otel-shop" in str(body))
        issues = api.get(f"/api/projects/{org['slug']}/issues", params={"query": "LookupError"}).json()
        events = [api.get(f"/api/issues/{i['id']}/events").json() for i in issues["issues"]]
        payloads = [api.get(f"/api/events/{e['event_id']}").text for page in events for e in page["events"]]
    texts = [str(trace), *payloads]
    assert any("no card on file for" in text for text in payloads), payloads
    assert "*" * len("jane.doe@example.com") in str(trace), trace  # the root span's attribute, masked
    assert [secret for secret in PLANTED for text in texts if secret in text] == []
