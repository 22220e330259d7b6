from __future__ import annotations

import pytest

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.errors import AccountError, AccountNotFound
from stacklens.control.keys.lifecycle import list_app_keys
from stacklens.control.projects import create_project, project_by_slug
from stacklens.settings import Settings


def test_project_slugs_are_unique_across_organizations(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        one, _ = accounts.create_organization(session, "One", "a@b.co", "password-1")
        two, _ = accounts.create_organization(session, "Two", "c@d.co", "password-1")
        first, _ = create_project(session, one.id, "Web App")
        second, _ = create_project(session, two.id, "Web App")
        third, _ = create_project(session, two.id, "web app!")
    assert (first.slug, second.slug, third.slug) == ("web-app", "web-app-2", "web-app-3")
    with session_scope(control_settings) as session:
        assert project_by_slug(session, "web-app-2").id == second.id
        with pytest.raises(AccountError):
            project_by_slug(session, "web-app-2", org_id=one.id)
    with pytest.raises(AccountError, match="platform"), session_scope(control_settings) as session:
        create_project(session, one.id, "X", platform="cobol")


def test_a_new_project_has_its_primary_app_key_and_refuses_bad_input(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "One", "a@b.co", "password-1")
        project, value = create_project(session, org.id, "  Shop  ", platform="javascript")
        assert (project.name, project.slug, project.platform) == ("Shop", "shop", "javascript")
        [primary] = list_app_keys(session, project.id)
        assert primary.service is None and value.endswith(primary.masked[-4:])
    with pytest.raises(AccountError, match="1 to 200"), session_scope(control_settings) as session:
        create_project(session, org.id, "   ")
    with pytest.raises(AccountNotFound), session_scope(control_settings) as session:
        create_project(session, org.id + 99, "Elsewhere")
    with (
        pytest.raises(AccountNotFound, match="no project with slug"),
        session_scope(control_settings) as session,
    ):
        project_by_slug(session, "nope")
