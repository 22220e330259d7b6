"""Fixtures of the feedback tests: a migrated control store (SQLite) with an organization and its project."""

from __future__ import annotations

from typing import Any

import pytest

from stacklens.settings import Settings


@pytest.fixture
def org(settings: Settings) -> dict[str, Any]:
    from stacklens.control import accounts
    from stacklens.control.db import migrate_control_store, session_scope
    from stacklens.control.projects import create_project

    migrate_control_store(settings)
    with session_scope(settings) as session:
        org, _ = accounts.create_organization(session, "Acme", "owner@acme.test", "password-123")
        project, _ = create_project(session, org.id, "Shop")
        return {"org_id": org.id, "project_id": project.id, "project": project.slug, "settings": settings}
