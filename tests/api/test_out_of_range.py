"""Ids beyond 64 bits in any path or form answer 404/400 with the error shape, and every 5xx is JSON
(issue #13, point 8), through a real uvicorn server so a reset connection would fail the test."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from stacklens.cli.app import build_app
from stacklens.settings import Settings
from tests.api.live import serve
from tests.dashboards.conftest import csrf_of
from tests.dashboards.landing import land, sdk_event

BEYOND = str(2**64)
SIGNED_OUT_OF_RANGE = str(2**63)  # fits UInt64, not the stores' signed 64-bit keys


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    with serve(stores) as url:
        yield url


def signed_in(base_url: str, email: str) -> httpx.Client:
    http = httpx.Client(base_url=base_url, timeout=30, follow_redirects=False)
    token = csrf_of(http.get("/login").text)
    answer = http.post("/login", data={"email": email, "password": "password-123", "csrf_token": token})
    assert answer.status_code == 303, answer.text
    return http


def routes_with_ids(app: Any) -> list[tuple[str, set[str]]]:
    """Every route (path template, methods) with a path parameter, however routers are nested."""
    found = []
    for route in app.routes:
        contexts = route.effective_route_contexts() if hasattr(route, "effective_route_contexts") else [route]
        for context in contexts:
            path = getattr(context, "path", "")
            if "{" in path and getattr(context, "methods", None):
                found.append((path, set(context.methods)))
    return found


def fill(path: str, org: dict[str, Any], number: str) -> str:
    """Slugs of the test's organization and project; ``number`` wherever an id or key id goes."""

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if "project" in name or name == "slug":
            return str(org["project"])
        if "org" in name:
            return str(org["org_slug"])
        return number if name.endswith("id") else "x"

    return re.sub(r"\{(\w+)(?::[^}]*)?\}", value, path)


@pytest.mark.parametrize("number", [BEYOND, SIGNED_OUT_OF_RANGE, "9" * 40])
def test_every_path_id_out_of_range_is_404_or_400(
    server: str,
    stores: Settings,
    org_factory,
    number: str,
) -> None:
    org = org_factory()
    page_client = signed_in(server, str(org["email"]))
    api_headers = {"Authorization": f"Bearer {org['api_key']}"}
    checked = 0
    for template, methods in routes_with_ids(build_app(stores)):
        if not re.search(r"\{\w*id\}", template) or "regenerate" in template:
            continue
        path = fill(template, org, number)
        for method in sorted(methods - {"HEAD"}):
            if path.startswith("/api"):
                answer = httpx.request(method, server + path, headers=api_headers, json={}, timeout=30)
                assert answer.headers["content-type"].startswith("application/json"), (method, path)
                # OTLP/HTTP answers its refusals as a google.rpc.Status (JSON for a JSON request), as its spec
                # asks.
                shape = {"code", "message"} if "/otlp/" in path else {"error", "detail"}
                assert set(answer.json()) - {"details"} == shape, (method, path, answer.text)
            else:
                token = csrf_of(page_client.get(f"/orgs/{org['org_slug']}/settings/members").text)
                answer = page_client.request(
                    method, path, data={"csrf_token": token} if method != "GET" else None
                )
            assert answer.status_code in (400, 404, 422), (
                method,
                path,
                answer.status_code,
                answer.text[:300],
            )
            checked += 1
    page_client.close()
    # API: app keys, issues, events, budgets; pages: issues, members, share links, events.
    assert checked >= 12, f"only {checked} routes with ids were found"


def _crash() -> None:
    raise ValueError("order 1 failed")


def test_form_numbers_out_of_range_are_400_never_500(
    server: str,
    stores: Settings,
    org_factory,
) -> None:
    org = org_factory()
    row = land(org["org_id"], org["project_id"], [sdk_event(_crash)])[0]
    http = signed_in(server, str(org["email"]))
    base = f"/orgs/{org['org_slug']}/projects/{org['project']}"
    issue = f"{base}/issues/{row['issue_id']}"
    token = csrf_of(http.get(issue).text)
    forms = [
        (f"{issue}/status", {"action": "ignore", "ignore_kind": "events", "ignore_events": BEYOND}),
        (f"{issue}/status", {"action": "ignore", "ignore_kind": "events", "ignore_events": "9" * 40}),
        (f"{base}/issues/bulk", {"action": "resolve", "issue_ids": BEYOND, "back": base + "/issues"}),
        (f"{base}/settings/app-keys", {"action": "revoke", "key_id": BEYOND}),
    ]
    for path, data in forms:
        answer = http.post(path, data={**data, "csrf_token": token})
        assert answer.status_code < 500, (path, data, answer.status_code, answer.text[:300])
        if data.get("ignore_kind") == "events":
            assert "enter a whole number of events from 1 to 1,000,000,000,000" in answer.text
    # The issue is untouched by the refused ignore counts, and still shows.
    assert http.get(issue).status_code == 200
    http.close()


def test_an_unexpected_failure_answers_the_json_error_shape(
    server: str,
    org_factory,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    org = org_factory()

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("the control store fell over")

    monkeypatch.setattr("api.routers.ingest.count_key_use", broken)
    line = (
        b'{"v":1,"type":"event","app_key":"%s","payload":{"message":"boom"}}' % str(org["app_key"]).encode()
    )
    answer = httpx.post(
        server + "/api/ingest",
        content=line,
        headers={"Authorization": f"Bearer {org['api_key']}"},
        timeout=30,
    )
    assert answer.status_code == 500
    assert answer.headers["content-type"].startswith("application/json")
    body = answer.json()
    assert body["error"] == "Internal Server Error" and "fell over" not in body["detail"]
