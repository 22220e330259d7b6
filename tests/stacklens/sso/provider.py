"""A real OpenID Connect provider for the SSO tests: panva's oidc-provider (from npm) on loopback, one process
per test module (``oidc_provider`` fixture), with helpers to register a client, set people and their groups,
forge the next ID token, and sign in at the provider over HTTP (its development login form) without a
browser.

Import the fixture into a test module: ``from tests.stacklens.sso.provider import oidc_provider``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx
import pytest

from stacklens.settings import Settings

PROVIDER_DIR = Path(__file__).parent / "oidc_provider"
PUBLIC = "http://stacklens.test"
CALLBACK = PUBLIC + "/auth/sso/callback"


def _install() -> None:
    """oidc-provider and jose from the npm registry (``npm ci`` when node_modules is missing)."""
    npm = shutil.which("npm")
    assert npm, "npm is required for the SSO tests (Node 20 + npm)"
    if not (PROVIDER_DIR / "node_modules" / "oidc-provider").is_dir():
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=PROVIDER_DIR,
            check=True,
            capture_output=True,
            timeout=600,
        )


@dataclass
class OidcProvider:
    issuer: str

    def register(self, redirect_uri: str, auth_method: str = "client_secret_post") -> tuple[str, str]:
        """A new client for ``redirect_uri`` (dynamic client registration) that authenticates at the token
        endpoint with ``auth_method``: ``(client_id, client_secret)``."""
        answer = httpx.post(
            f"{self.issuer}/reg",
            json={
                "redirect_uris": [redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "response_types": ["code"],
                "token_endpoint_auth_method": auth_method,
            },
            timeout=10,
        )
        assert answer.status_code == 201, answer.text
        body = answer.json()
        return body["client_id"], body["client_secret"]

    def set_users(self, users: dict[str, dict[str, Any] | None]) -> None:
        """People by login: ``{"ada": {"email": …, "email_verified": True, "groups": [...]}}``; ``None``
        removes one (a leaver: their refresh tokens are refused from then on)."""
        assert httpx.post(f"{self.issuer}/test/users", json=users, timeout=10).status_code == 204

    def forge_next(self, **change: Any) -> None:
        """The next ID token is re-signed: ``claims={…}`` changed (None removes one), or
        ``sign_with="foreign"`` (a key the provider does not publish) / ``"rotated"`` (published from now)."""
        assert httpx.post(f"{self.issuer}/test/forge", json=change, timeout=10).status_code == 204

    def reset(self) -> None:
        assert httpx.post(f"{self.issuer}/test/reset", json={}, timeout=10).status_code == 204

    def sign_in(self, authorization_url: str, login: str, callback_prefix: str) -> str:
        """Sign in as ``login`` at the provider over HTTP; the callback URL (with code and state) it sends
        the browser to."""
        with httpx.Client(timeout=10) as browser:
            url = authorization_url
            for _ in range(10):
                answer = browser.get(url)
                if answer.status_code in (302, 303):
                    url = urljoin(url, answer.headers["location"])
                    if url.startswith(callback_prefix):
                        return url
                    continue
                form = re.search(r'<form[^>]*action="([^"]+)"', answer.text)
                assert answer.status_code == 200 and form, answer.text[:500]
                posted = browser.post(
                    urljoin(url, form.group(1)),
                    data={"prompt": "login", "login": login, "password": "any"},
                )
                assert posted.status_code in (302, 303), posted.text[:500]
                url = urljoin(url, posted.headers["location"])
                if url.startswith(callback_prefix):
                    return url
        raise AssertionError("the provider never sent the browser back")


def callback_params(url: str) -> dict[str, str]:
    return {name: values[0] for name, values in parse_qs(urlsplit(url).query).items()}


@pytest.fixture(scope="module")
def oidc_provider() -> Iterator[OidcProvider]:
    """One provider process for the test module (started in ~1 s; each test registers its own client)."""
    _install()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PORT": str(port), "CLIENTS": "[]", "USERS": json.dumps({})}
    process = subprocess.Popen(
        ["node", "provider.js"],
        cwd=PROVIDER_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        deadline = time.monotonic() + 30
        line = ""
        while time.monotonic() < deadline and "ready" not in line:
            line = process.stdout.readline()
            if not line and process.poll() is not None:
                raise AssertionError("the OIDC provider did not start")
        provider = OidcProvider(f"http://127.0.0.1:{port}")
        yield provider
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
        if process.stdout is not None:
            process.stdout.close()


def sso_settings(tmp_path: Path, warehouse_url: str) -> Settings:
    """Settings for the SSO tests, with a migrated control store: the provider on loopback allowed
    (STACKLENS_OUTBOUND_ALLOW, as the webhook tests do) and a public URL, so the callback URL is known before
    any server runs. The SSO tests never open the warehouse, so one store serves a whole module."""
    from stacklens.control.db import migrate_control_store
    from tests.conftest import make_settings

    data_dir = tmp_path / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    current = make_settings(data_dir, warehouse_url, outbound_allow="127.0.0.1", public_url=PUBLIC)
    migrate_control_store(current)
    return current


def new_org(settings: Settings, name: str) -> dict[str, Any]:
    """A new organization (with its owner and API key) in ``settings``' control store."""
    from stacklens.control import accounts
    from stacklens.control.db import session_scope

    email = f"owner-{uuid.uuid4().hex[:8]}@example.test"
    with session_scope(settings) as session:
        org, api_key = accounts.create_organization(
            session, f"{name} {uuid.uuid4().hex[:6]}", email, "password-123"
        )
        return {"org_id": org.id, "org_slug": org.slug, "email": email, "api_key": api_key}
