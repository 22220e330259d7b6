"""Dashboard fixtures: a test client of the whole app, and helpers to sign in and add members (the migrated
``stores`` and ``org_factory`` are in ``tests/conftest.py``)."""

from __future__ import annotations

import re
import uuid
from typing import Any

from fastapi.testclient import TestClient

from stacklens.settings import Settings
from tests.conftest import PASSWORD


def csrf_of(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]+)"', html)
    assert match, "page has no CSRF token"
    return match.group(1)


def sign_in(client: TestClient, email: str, password: str = PASSWORD) -> None:
    token = csrf_of(client.get("/login").text)
    response = client.post(
        "/login", data={"email": email, "password": password, "csrf_token": token}, follow_redirects=False
    )
    assert response.status_code == 303, response.text


def add_member(settings: Settings, org: dict[str, Any], role: str = "member") -> str:
    """A new person in ``org`` with ``role``; returns their e-mail (password :data:`PASSWORD`)."""
    from stacklens.control import accounts
    from stacklens.control.db import session_scope

    email = f"{role}-{uuid.uuid4().hex[:8]}@example.test"
    with session_scope(settings) as session:
        accounts.add_member(session, org["org_id"], email, PASSWORD, role)
    return email
