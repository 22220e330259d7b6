"""Integrations API against a strict local tracker: connections tested on save (token never returned, a
refused token never stored), external links idempotent per issue and target, a crash between the tracker
and the store adopting the ticket it made, failures leaving nothing half-created and an activity entry,
organization isolation, bad input naming the field, and the state read back resolving the issue."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from stacklens.control.models.integrations import ExternalLink, TrackerConnection
from stacklens.integrations.sync import sync_states
from stacklens.settings import Settings, override_settings
from stacklens.warehouse.client import get_warehouse
from tests.dashboards.landing import land, sdk_event
from tests.stacklens.integrations import fake_trackers as ft
from tests.stacklens.integrations.fake_trackers import FakeTrackers


def _checkout_total() -> None:
    items: list[int] = []
    print(sum(items) / len(items))


@pytest.fixture(scope="module")
def fake_server() -> Iterator[FakeTrackers]:
    server = FakeTrackers().start()
    yield server
    server.stop()


@pytest.fixture
def fake(fake_server: FakeTrackers) -> Iterator[FakeTrackers]:
    for part in (fake_server.calls, fake_server.violations, fake_server.script):
        part.clear()
    fake_server.tickets.clear()
    yield fake_server
    assert fake_server.violations == []


@pytest.fixture
def allowed(stores: Settings) -> Iterator[Settings]:
    current = stores.model_copy(
        update={"outbound_allow": "127.0.0.1", "public_url": "https://sl.example.com"}
    )
    override_settings(current)
    yield current
    override_settings(None)


@pytest.fixture
def api(allowed: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(allowed)) as test_client:
        yield test_client


def auth(org: dict[str, Any]) -> dict[str, str]:
    return {"Authorization": f"Bearer {org['api_key']}"}


def connect(api: TestClient, org: dict[str, Any], fake: FakeTrackers, **extra: Any) -> dict[str, Any]:
    body = {"type": "github", "name": "Web repo", "base_url": fake.url, "token": ft.GITHUB_TOKEN, **extra}
    answer = api.post("/api/integrations", json=body, headers=auth(org))
    assert answer.status_code == 201, answer.text
    return answer.json()


def an_issue(org: dict[str, Any]) -> str:
    rows = land(org["org_id"], org["project_id"], [sdk_event(_checkout_total)])
    return str(rows[0]["issue_id"])


def activity(settings: Settings, org_id: int) -> list[tuple[str, dict]]:
    with session_scope(settings) as session:
        rows = session.scalars(
            select(ActivityEntry).where(ActivityEntry.org_id == org_id).order_by(ActivityEntry.id)
        )
        return [(r.action, dict(r.detail or {})) for r in rows]


def test_connection_is_tested_on_save_and_the_token_never_shown(api, org_factory, fake, allowed) -> None:
    org = org_factory("Acme")
    created = connect(api, org, fake, default_target="acme/web")
    assert created["connected_as"] == "octocat" and created["targets"] == ["acme/web", "acme/api"]
    assert created["token"] == "…1234" and ft.GITHUB_TOKEN not in str(created)
    listed = api.get("/api/integrations", headers=auth(org)).json()["integrations"]
    assert [i["id"] for i in listed] == [created["id"]] and ft.GITHUB_TOKEN not in str(listed)
    with session_scope(allowed) as session:
        stored = session.get(TrackerConnection, created["id"])
        assert stored is not None and ft.GITHUB_TOKEN not in stored.token_encrypted
    refused = api.post(
        "/api/integrations",
        json={"type": "github", "base_url": fake.url, "token": "ghp_wrong"},
        headers=auth(org),
    )
    assert refused.status_code == 400 and "refused the token" in refused.json()["detail"]
    assert len(api.get("/api/integrations", headers=auth(org)).json()["integrations"]) == 1
    assert ("integration.created", {"type": "github", "name": "Web repo", "account": "octocat"}) in activity(
        allowed, org["org_id"]
    )


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"type": "bugzilla", "token": "x"}, "type"),
        ({"type": "github"}, "token"),
        ({"type": "github", "token": 5}, "token"),
        ({"type": "jira", "token": "x"}, "base_url"),
        ({"type": "jira", "token": "x", "base_url": "ftp://jira"}, "base_url"),
        ({"type": "jira", "token": "x", "base_url": "https://x.atlassian.net", "email": "nope"}, "email"),
        ({"type": "gitlab", "token": "x", "base_url": "http://10.0.0.5"}, "base_url"),
        ({"type": "linear", "token": "x", "resolve_on_close": "yes"}, "resolve_on_close"),
    ],
)
def test_bad_connection_input_names_the_field(api, org_factory, body, field) -> None:
    answer = api.post("/api/integrations", json=body, headers=auth(org_factory("Acme")))
    assert answer.status_code == 400 and answer.json()["detail"].startswith(f"{field}: "), answer.text


@pytest.mark.parametrize(
    ("base_url", "detail"),
    [
        ("http://167772161", "167772161 means 10.0.0.1, a private address"),
        ("https://0xa000001/gitlab", "0xa000001 means 10.0.0.1, a private address"),
        ("https://012.1", "012.1 means 10.0.0.1, a private address"),
        ("https://0300.0250.0.1", "0300.0250.0.1 means 192.168.0.1, a private address"),
        ("https://[::a00:5]", "::a00:5 is IPv4-compatible IPv6 for 10.0.0.5, a private address"),
        (
            "https://[::ffff:a9fe:a9fe]",
            "::ffff:a9fe:a9fe is IPv4-mapped IPv6 for 169.254.169.254, a link-local",
        ),
        ("https://[64:ff9b::a00:5]", "64:ff9b::a00:5 is NAT64 IPv6 for 10.0.0.5, a private address"),
        ("https://[2002:a00:5::1]", "2002:a00:5::1 is 6to4 IPv6 for 10.0.0.5, a private address"),
    ],
)
def test_every_literal_form_of_a_private_base_url_is_refused(api, org_factory, base_url, detail) -> None:
    org = org_factory("Acme")
    body = {"type": "gitlab", "token": "x", "base_url": base_url}
    answer = api.post("/api/integrations", json=body, headers=auth(org))
    assert answer.status_code == 400 and answer.json()["detail"].startswith(f"base_url: {detail}"), (
        answer.text
    )
    assert "STACKLENS_OUTBOUND_ALLOW" in answer.json()["detail"]
    assert api.get("/api/integrations", headers=auth(org)).json()["integrations"] == []


def test_an_allowed_literal_base_url_is_stored_as_the_address_it_means(api, org_factory, fake) -> None:
    created = connect(
        api, org_factory("Acme"), fake, base_url=fake.url.replace("127.0.0.1", "2130706433") + "/"
    )
    assert created["base_url"] == fake.url


def test_create_is_idempotent_per_issue_and_target_and_scoped(api, org_factory, fake, allowed) -> None:
    org, other = org_factory("Acme"), org_factory("Other")
    integration = connect(api, org, fake, default_target="acme/web")
    issue = an_issue(org)
    path = f"/api/issues/{issue}/external-links"
    first = api.post(path, json={"integration_id": integration["id"]}, headers=auth(org))
    assert first.status_code == 201, first.text
    link = first.json()
    assert (link["key"], link["state"], link["ticket_state"]) == ("acme/web#1", "linked", "open")
    again = api.post(
        path, json={"integration_id": integration["id"], "target": "acme/web"}, headers=auth(org)
    )
    assert again.status_code == 200 and again.json()["id"] == link["id"]
    assert list(fake.tickets) == ["acme/web#1"]
    body = fake.tickets["acme/web#1"]["body"]
    assert "ZeroDivisionError" in body and "_checkout_total" in body and "Events:" in body
    assert f"https://sl.example.com/orgs/{org['org_slug']}/projects/{org['project']}/issues/{issue}" in body
    assert "First seen" in body and "StackLens reference: stacklens" in body
    second = api.post(
        path, json={"integration_id": integration["id"], "target": "acme/api"}, headers=auth(org)
    )
    assert second.status_code == 201 and second.json()["key"] == "acme/api#1"
    assert [x["key"] for x in api.get(path, headers=auth(org)).json()["links"]] == [
        "acme/web#1",
        "acme/api#1",
    ]
    # Another organization sees neither the issue nor the connection.
    assert api.post(path, json={"integration_id": integration["id"]}, headers=auth(other)).status_code == 404
    theirs = an_issue(other)
    borrowed = api.post(
        f"/api/issues/{theirs}/external-links",
        json={"integration_id": integration["id"]},
        headers=auth(other),
    )
    assert borrowed.status_code == 404 and len(fake.tickets) == 2
    assert api.delete(f"/api/integrations/{integration['id']}", headers=auth(other)).status_code == 404
    assert api.delete(f"/api/integrations/{integration['id']}", headers=auth(org)).status_code == 204
    assert api.get(path, headers=auth(org)).json()["links"] == []  # its links went with it
    assert api.get("/api/integrations", headers=auth(org)).json()["integrations"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "integration_id"),
        ({"integration_id": "abc"}, "integration_id"),
        ({"integration_id": 1, "target": 5}, "target"),
        ({"integration_id": 1, "target": "no-slash"}, "target"),
        ({"integration_id": 1, "reference": "not a ticket"}, "reference"),
        ({"integration_id": 1, "title": ["x"]}, "title"),
    ],
)
def test_bad_link_input_names_the_field(api, org_factory, fake, body, field) -> None:
    org = org_factory("Acme")
    integration = connect(api, org, fake)
    if body.get("integration_id") == 1:
        body = {**body, "integration_id": integration["id"]}
    answer = api.post(f"/api/issues/{an_issue(org)}/external-links", json=body, headers=auth(org))
    assert answer.status_code == 400 and answer.json()["detail"].startswith(f"{field}: "), answer.text
    assert fake.tickets == {}


def test_link_existing_by_url(api, org_factory, fake) -> None:
    org = org_factory("Acme")
    integration = connect(api, org, fake)
    fake.tickets["acme/api#1"] = {
        "key": "acme/api#1",
        "title": "t",
        "body": "",
        "state": "closed",
        "target": "acme/api",
    }
    issue = an_issue(org)
    body = {"integration_id": integration["id"], "reference": "https://github.example.com/acme/api/issues/1"}
    linked = api.post(f"/api/issues/{issue}/external-links", json=body, headers=auth(org))
    assert linked.status_code == 201, linked.text
    assert (linked.json()["key"], linked.json()["ticket_state"], linked.json()["origin"]) == (
        "acme/api#1",
        "closed",
        "linked",
    )
    assert api.post(f"/api/issues/{issue}/external-links", json=body, headers=auth(org)).status_code == 200
    missing = api.post(
        f"/api/issues/{issue}/external-links",
        json={"integration_id": integration["id"], "reference": "acme/api#9"},
        headers=auth(org),
    )
    assert missing.status_code == 400 and "found no issue acme/api#9" in missing.json()["detail"]


def test_a_refusal_leaves_nothing_and_is_logged(api, org_factory, fake, allowed) -> None:
    org = org_factory("Acme")
    integration = connect(api, org, fake)
    answer = api.post(
        f"/api/issues/{an_issue(org)}/external-links",
        json={"integration_id": integration["id"], "target": "acme/gone"},
        headers=auth(org),
    )
    assert answer.status_code == 400 and "GitHub found no repository acme/gone" in answer.json()["detail"]
    with session_scope(allowed) as session:
        assert session.scalars(select(ExternalLink)).all() == []
    failed = [d for a, d in activity(allowed, org["org_id"]) if a == "external_link.failed"]
    assert failed and failed[0]["target"] == "acme/gone" and "404" in failed[0]["error"]


def test_an_ambiguous_failure_then_a_retry_makes_one_ticket(
    api, org_factory, fake, allowed, monkeypatch
) -> None:
    from stacklens.integrations.trackers.base import Tracker

    monkeypatch.setattr(Tracker, "sleep", staticmethod(lambda s: None))
    org = org_factory("Acme")
    integration = connect(api, org, fake, default_target="acme/web")
    issue = an_issue(org)
    path = f"/api/issues/{issue}/external-links"
    fake.script[:] = [(502, {}, 0)] * 3
    down = api.post(path, json={"integration_id": integration["id"]}, headers=auth(org))
    assert down.status_code == 503 and "GitHub failed (502)" in down.json()["detail"]
    with session_scope(allowed) as session:
        (pending,) = session.scalars(select(ExternalLink)).all()
        assert pending.state == "creating" and "502" in pending.last_error
    assert api.post(path, json={"integration_id": integration["id"]}, headers=auth(org)).status_code == 201
    assert list(fake.tickets) == ["acme/web#1"]
    assert any("/search/issues" in c.path for c in fake.calls)  # the retry looked for the marker first


def test_a_crash_between_tracker_and_store_adopts_the_ticket(api, org_factory, fake, allowed) -> None:
    org = org_factory("Acme")
    integration = connect(api, org, fake, default_target="acme/web")
    issue = an_issue(org)
    with session_scope(allowed) as session:  # what a process killed after the tracker's answer leaves
        session.add(
            ExternalLink(
                org_id=org["org_id"],
                project_id=org["project_id"],
                issue_id=int(issue),
                connection_id=integration["id"],
                target="acme/web",
                state="creating",
                marker="stacklensdeadbeef",
                started_at=datetime.now(UTC),
            )
        )
    fake.tickets["acme/web#1"] = {
        "key": "acme/web#1",
        "title": "t",
        "body": "… StackLens reference: stacklensdeadbeef",
        "state": "open",
        "target": "acme/web",
    }
    path = f"/api/issues/{issue}/external-links"
    busy = api.post(path, json={"integration_id": integration["id"]}, headers=auth(org))
    assert busy.status_code == 409 and "being created" in busy.json()["detail"]  # still within its lease
    with session_scope(allowed) as session:
        row = session.scalars(select(ExternalLink)).one()
        row.started_at = datetime.now(UTC) - timedelta(minutes=10)
    adopted = api.post(path, json={"integration_id": integration["id"]}, headers=auth(org))
    assert adopted.status_code == 201 and adopted.json()["key"] == "acme/web#1"
    assert list(fake.tickets) == ["acme/web#1"] and not any(c.method == "POST" for c in fake.calls[-2:])


def test_state_read_back_resolves_the_issue_when_asked(api, org_factory, fake, allowed) -> None:
    org = org_factory("Acme")
    integration = connect(api, org, fake, default_target="acme/web", resolve_on_close=True)
    issue = an_issue(org)
    api.post(
        f"/api/issues/{issue}/external-links", json={"integration_id": integration["id"]}, headers=auth(org)
    )
    client = get_warehouse(allowed)
    assert sync_states(allowed, client).changed == 0
    fake.close_ticket("acme/web#1")
    summary = sync_states(allowed, client)
    assert (summary.checked, summary.changed, summary.resolved) == (1, 1, 1)
    assert api.get(f"/api/issues/{issue}", headers=auth(org)).json()["status"] == "resolved"
    link = api.get(f"/api/issues/{issue}/external-links", headers=auth(org)).json()["links"][0]
    assert link["ticket_state"] == "closed" and link["checked_at"]
    assert "external_link.closed" in [a for a, _ in activity(allowed, org["org_id"])]
    fake.script[:] = [(401, {}, 0)]
    failed = sync_states(allowed, client)
    assert failed.failed == 1
    link = api.get(f"/api/issues/{issue}/external-links", headers=auth(org)).json()["links"][0]
    assert "refused the token" in link["last_error"]
