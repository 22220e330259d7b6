"""Every route that takes a body, sent JSON nested 10,000 levels deep through a real uvicorn server: none
answers 500, every route that reads the body answers 400 naming the depth limit, and the same keep-alive
connection answers the next request normally."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import params

from stacklens.cli.app import build_app
from stacklens.ingest.jsondepth import MAX_JSON_DEPTH
from stacklens.settings import Settings
from tests.api.live import serve
from tests.dashboards.conftest import PASSWORD, csrf_of

DEEP = b'{"a":' * 10_000 + b"1" + b"}" * 10_000
WORDS = f"nests deeper than {MAX_JSON_DEPTH} levels"
# Routes that read their body themselves (FastAPI knows no body field for them).
READ_BY_THE_ROUTE = {
    "/api/ingest",
    "/api/{project_id}/envelope/",
    "/api/{project_id}/store/",
    "/api/{project_id}/otlp/v1/traces",
    "/api/{project_id}/otlp/v1/logs",
    "/api/projects/{slug}/budgets/lighthouse",
    "/api/0/organizations/{org}/chunk-upload/",
}


@pytest.fixture
def server(stores: Settings) -> Iterator[str]:
    with serve(stores) as url:
        yield url


def routes_with_bodies(app: Any) -> list[tuple[str, str, bool]]:
    """(method, path template, whether the route reads a JSON body) of every route a body can be sent to,
    however routers are nested; key regenerations last (they end the key the walk uses)."""
    found = []
    for route in app.routes:
        contexts = route.effective_route_contexts() if hasattr(route, "effective_route_contexts") else [route]
        for context in contexts:
            field = getattr(getattr(context, "original_route", context), "body_field", None)
            # A JSON body field is parsed from any body; a form is read only from a form's content type.
            parsed = field is not None and not isinstance(field.field_info, params.Form)
            reads = parsed or context.path in READ_BY_THE_ROUTE
            for method in sorted(
                set(getattr(context, "methods", None) or ()) & {"POST", "PUT", "PATCH", "DELETE"}
            ):
                found.append((method, context.path, reads))
    return sorted(found, key=lambda route: "regenerate" in route[1])


def fill(path: str, org: dict[str, Any]) -> str:
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "project_id":
            return str(org["project_id"])
        if "project" in name or name == "slug":
            return str(org["project"])
        if "org" in name:
            return str(org["org_slug"])
        return "1" if name.endswith("id") else "x"

    return re.sub(r"\{(\w+)(?::[^}]*)?\}", value, path)


def _port(answer: httpx.Response) -> int:
    return int(answer.extensions["network_stream"].get_extra_info("client_addr")[1])


def test_every_route_refuses_deep_json_and_keeps_the_connection(
    server: str,
    stores: Settings,
    org_factory,
) -> None:
    org = org_factory()
    routes = routes_with_bodies(build_app(stores))
    assert len(routes) >= 50, "the walk finds the nested routers' routes"
    with httpx.Client(base_url=server, timeout=30, follow_redirects=False) as http:
        token = csrf_of(http.get("/login").text)
        signed_in = http.post(
            "/login", data={"email": org["email"], "password": PASSWORD, "csrf_token": token}
        )
        assert signed_in.status_code == 303, signed_in.text
        port = _port(http.get("/api/health"))
        bearer = {"Authorization": f"Bearer {org['api_key']}"}
        # JSON inside a form (a pasted budget.json), in a body not labelled JSON, or in a cursor: the parsers
        # take the same guard.
        budgets = f"/orgs/{org['org_slug']}/projects/{org['project']}/performance/budgets"
        token = csrf_of(http.get(budgets).text)
        page = http.post(budgets + "/import", data={"csrf_token": token, "budget_json": DEEP.decode()})
        assert page.status_code < 500 and WORDS in page.text, page.text[:300]
        lighthouse = f"/api/projects/{org['project']}/budgets/lighthouse"
        api = http.post(lighthouse, content=DEEP, headers={**bearer, "Content-Type": "text/plain"})
        assert api.status_code == 400 and WORDS in api.json()["detail"], api.text[:300]
        cursor = base64.urlsafe_b64encode(b"[" * 2_000 + b"]" * 2_000).decode()
        listed = http.get("/api/activity", params={"cursor": cursor}, headers=bearer)
        assert listed.status_code == 400, listed.text[:300]
        refused = []
        for method, template, reads in routes:
            path = fill(template, org)
            headers = {"Content-Type": "application/json", "Authorization": f"Bearer {org['api_key']}"}
            sentry = template.endswith(("/envelope/", "/store/")) or "/otlp/" in template
            params = {"sentry_key": org["app_key"]} if sentry else None
            answer = http.request(method, path, content=DEEP, headers=headers, params=params)
            assert answer.status_code < 500, (method, path, answer.status_code, answer.text[:300])
            if reads:
                assert answer.status_code == 400, (method, path, answer.status_code, answer.text[:300])
                assert WORDS in answer.text, (method, path, answer.text[:300])
                refused.append(path)
            assert _port(answer) == port, f"{method} {path}: the connection was not kept"
            after = http.get("/api/health")
            assert after.status_code == 200 and _port(after) == port, (method, path, after.text[:200])
    assert len(refused) >= 15, refused


# Routes that parse their body as JSON whatever its content type says (Explore reads its body itself). FastAPI
# parses a body field only from a body labelled JSON (strict content type): the others answer 4xx unparsed.
PARSED_WHATEVER_THE_TYPE = {
    ("POST", "/api/explore/query"),
    ("POST", "/api/explore/queries"),
    ("PUT", "/api/explore/queries/{query_id}"),
}


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_deep_json_not_labelled_json_is_refused_too(
    server: str,
    stores: Settings,
    org_factory,
    content_type: str | None,
) -> None:
    """A body parsed as JSON passes the depth guard whatever its content type: Explore's routes parse any
    body."""
    org = org_factory()
    routes = routes_with_bodies(build_app(stores))
    with httpx.Client(base_url=server, timeout=30, follow_redirects=False) as http:
        port = _port(http.get("/api/health"))
        refused = []
        for method, template, _ in routes:
            path = fill(template, org)
            headers = {"Authorization": f"Bearer {org['api_key']}"}
            if content_type:
                headers["Content-Type"] = content_type
            sentry = template.endswith(("/envelope/", "/store/")) or "/otlp/" in template
            params = {"sentry_key": org["app_key"]} if sentry else None
            request = http.build_request(method, path, content=DEEP, headers=headers, params=params)
            if content_type is None:
                request.headers.pop("Content-Type", None)
            answer = http.send(request)
            assert answer.status_code < 500, (method, path, answer.status_code, answer.text[:300])
            if (method, template) in PARSED_WHATEVER_THE_TYPE:
                assert answer.status_code == 400, (method, path, answer.status_code, answer.text[:300])
                assert WORDS in answer.text, (method, path, answer.text[:300])
                refused.append(path)
            assert _port(answer) == port, f"{method} {path}: the connection was not kept"
            after = http.get("/api/health")
            assert after.status_code == 200 and _port(after) == port, (method, path, after.text[:200])
    assert len(refused) == len(PARSED_WHATEVER_THE_TYPE), refused
