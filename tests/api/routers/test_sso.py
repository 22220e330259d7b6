"""`GET/PUT/DELETE /api/sso` and `GET /api/audit` with the organization's API key, against a real OpenID
Connect provider on loopback: the client secret is write-only (stored encrypted), a field left out keeps its
value, and each bad input is a 400 naming the field — a provider that cannot be reached, one outside the
outbound guard's allow-list, a discovery document without the endpoints a code flow needs, a role map naming
an unknown role, a session age under 5 minutes. Another organization's key sees only its own settings."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import SsoConfig
from stacklens.settings import Settings
from tests.stacklens.sso.provider import CALLBACK, OidcProvider, new_org, oidc_provider, sso_settings

__all__ = ["oidc_provider"]


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Settings:
    return sso_settings(tmp_path_factory.mktemp("sso-api"), warehouse_url)


@pytest.fixture(scope="module")
def client(store: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(store)) as test_client:
        yield test_client


class _NotAProvider(BaseHTTPRequestHandler):
    """Answers a discovery document without a token endpoint or key set (an OAuth server, not OIDC)."""

    def do_GET(self) -> None:  # the standard library's name
        issuer = f"http://127.0.0.1:{self.server.server_address[1]}"
        body = json.dumps({"issuer": issuer, "authorization_endpoint": issuer + "/auth"}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def not_a_provider() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NotAProvider)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_sso_settings_are_set_read_and_changed_with_the_secret_write_only(
    client: TestClient, store: Settings, oidc_provider: OidcProvider
) -> None:
    acme, other = new_org(store, "Acme"), new_org(store, "Other")
    auth = {"Authorization": f"Bearer {acme['api_key']}"}
    empty = client.get("/api/sso", headers=auth).json()
    assert empty["configured"] is False and empty["session_max_age_minutes"] == 720
    assert empty["callback_url"] == CALLBACK

    client_id, secret = oidc_provider.register(CALLBACK)
    body = {
        "issuer": oidc_provider.issuer,
        "client_id": client_id,
        "client_secret": secret,
        "scopes": ["openid", "email", "groups"],
        "groups_claim": "groups",
        "role_map": {"sre": "owner", "dev": "member", "auditors": "viewer", "leads": "admin"},
        "default_role": "viewer",
        "enforce": False,
        "session_max_age_minutes": 60,
        "allowed_domains": ["Acme.test"],
    }
    saved = client.put("/api/sso", json=body, headers=auth)
    assert saved.status_code == 200, saved.text
    answer = saved.json()
    assert "client_secret" not in answer and secret not in saved.text and answer["has_client_secret"] is True
    assert answer["role_map"] == body["role_map"] and answer["allowed_domains"] == ["acme.test"]
    assert (answer["configured"], answer["session_max_age_minutes"], answer["issuer"]) == (
        True,
        60,
        oidc_provider.issuer,
    )
    with session_scope(store) as session:
        stored = session.scalar(select(SsoConfig).where(SsoConfig.org_id == acme["org_id"]))
        assert stored is not None and secret not in stored.client_secret_encrypted

    # A field left out keeps its value, the secret too.
    changed = client.put("/api/sso", json={"enforce": True, "session_max_age_minutes": 5}, headers=auth)
    assert changed.status_code == 200, changed.text
    assert changed.json()["enforce"] is True and changed.json()["has_client_secret"] is True
    assert client.get("/api/sso", headers=auth).json()["client_id"] == client_id
    slash = client.put("/api/sso", json={"issuer": oidc_provider.issuer + "/"}, headers=auth)
    assert (
        slash.status_code == 200 and slash.json()["issuer"] == oidc_provider.issuer
    )  # the provider's spelling

    theirs = {"Authorization": f"Bearer {other['api_key']}"}
    assert client.get("/api/sso", headers=theirs).json()["configured"] is False
    assert client.get("/api/sso").status_code == 401

    entries = client.get("/api/audit", params={"action": "sso"}, headers=auth).json()["items"]
    assert [e["action"] for e in entries] == ["sso.configured"] * 3
    assert secret not in json.dumps(entries)
    assert client.get("/api/audit", params={"action": "sso"}, headers=theirs).json()["items"] == []

    assert client.delete("/api/sso", headers=auth).status_code == 204
    assert client.get("/api/sso", headers=auth).json()["configured"] is False
    assert client.delete("/api/sso", headers=auth).status_code == 404


def test_bad_settings_answer_400_naming_the_field(
    client: TestClient, store: Settings, oidc_provider: OidcProvider, not_a_provider: str
) -> None:
    org = new_org(store, "Bad input")
    auth = {"Authorization": f"Bearer {org['api_key']}"}
    good = {"issuer": oidc_provider.issuer, "client_id": "c", "client_secret": "s"}
    cases: list[tuple[dict[str, Any], str, str]] = [
        ({"issuer": f"http://127.0.0.1:{_closed_port()}"}, "issuer: ", "cannot be reached"),
        ({"issuer": not_a_provider}, "issuer: ", "no token_endpoint, jwks_uri"),
        ({"issuer": "http://10.255.255.1/realms/x"}, "issuer: ", "STACKLENS_OUTBOUND_ALLOW"),
        ({"issuer": "ftp://id.example.com"}, "issuer: ", "http(s) URL"),
        ({"role_map": {"sre": "superuser"}}, "role_map: ", "'superuser', which is not a role"),
        ({"role_map": ["sre"]}, "role_map: ", "must be an object"),
        ({"default_role": "god"}, "default_role: ", "not a role"),
        ({"session_max_age_minutes": 4}, "session_max_age_minutes: ", "between 5 and"),
        ({"allowed_domains": ["not a domain"]}, "allowed_domains: ", "not a domain name"),
        ({"client_secret": ""}, "client_secret: ", "is required"),
        ({"enforce": "yes"}, "enforce: ", "true or false"),
    ]
    for change, field, words in cases:
        answer = client.put("/api/sso", json={**good, **change}, headers=auth)
        assert answer.status_code == 400, (change, answer.text)
        detail = answer.json()["detail"]
        assert detail.startswith(field) and words in detail, (change, detail)
    assert client.get("/api/sso", headers=auth).json()["configured"] is False
    bad_cursor = client.get("/api/audit", params={"cursor": "nope"}, headers=auth)
    assert bad_cursor.status_code == 400
