"""Dashboard fixtures: migrated stores, an organization with an owner who can sign in, and a test client."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from stacklens.settings import Settings

PASSWORD = "password-123"


@pytest.fixture
def stores(settings: Settings) -> Settings:
    from stacklens.control.db import migrate_control_store
    from stacklens.warehouse.migrations import apply_migrations

    migrate_control_store(settings)
    apply_migrations(settings)
    return settings


@pytest.fixture
def org_factory(stores: Settings):
    """``org_factory("Acme")`` → dict(org_id, org_slug, email, api_key, project, project_id, app_key)."""
    from stacklens.control import accounts
    from stacklens.control.db import session_scope
    from stacklens.control.projects import create_project

    def make(name: str = "Acme", project: str = "Web App") -> dict[str, Any]:
        email = f"owner-{uuid.uuid4().hex[:8]}@example.test"
        with session_scope(stores) as session:
            org, api_key = accounts.create_organization(session, name, email, PASSWORD)
            created, app_key = create_project(session, org.id, project)
            return {
                "org_id": org.id,
                "org_slug": org.slug,
                "email": email,
                "api_key": api_key,
                "project": created.slug,
                "project_id": created.id,
                "app_key": app_key,
            }

    return make


@pytest.fixture
def client(stores: Settings) -> Iterator[TestClient]:
    from stacklens.cli.app import build_app

    with TestClient(build_app(stores)) as test_client:
        yield test_client


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
