"""Which projects an Explore query may read: all of the organization's, or one of them by slug."""

from __future__ import annotations

import pytest

from stacklens.control.db import session_scope
from stacklens.control.projects import create_project
from stacklens.errors import NotFound
from stacklens.explore.scope import project_ids
from stacklens.settings import Settings


def test_the_organizations_projects_and_one_by_slug(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme", "Web App"), make_org("Globex", "Shop")
    with session_scope(settings) as session:
        api, _ = create_project(session, int(acme["org_id"]), "API")
        both = project_ids(session, int(acme["org_id"]), "")
        assert both == sorted([int(acme["project_id"]), api.id])
        # The slug is read as typed in a URL: spaces and capitals do not matter.
        assert project_ids(session, int(acme["org_id"]), " API ") == [api.id]
        # Another organization's project answers like one that does not exist.
        for slug in (str(other["project"]), "nowhere"):
            with pytest.raises(NotFound, match=f"no project '{slug}'"):
                project_ids(session, int(acme["org_id"]), slug)
