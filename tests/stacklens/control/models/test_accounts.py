"""The account tables: an organization's default quotas, its projects and their primary application key."""

from __future__ import annotations

from stacklens.control.db import session_scope
from stacklens.control.models.accounts import Organization
from stacklens.settings import Settings


def test_an_organizations_defaults_and_its_project(settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    with session_scope(settings) as session:
        org = session.get(Organization, acme["org_id"])
        assert org is not None and (org.events_per_minute, org.requests_per_second) == (60_000, 50)
        assert org.created_at.tzinfo is not None
        [project] = org.projects
        assert project.id == acme["project_id"] and project.organization is org
        assert (project.replay_enabled, project.in_app_include, project.in_app_exclude) == (True, [], [])
        assert [key.service for key in project.app_keys] == [None]  # the primary key
