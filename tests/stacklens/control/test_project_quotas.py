from __future__ import annotations

import pytest

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.project_quotas import project_quotas, set_project_quota
from stacklens.control.projects import create_project
from stacklens.errors import InvalidInput, NotFound
from stacklens.settings import Settings


def test_a_project_quota_is_set_checked_and_read(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Quota Org", "q@example.test", "password-123")
        project, _ = create_project(session, org.id, "Shop")
        other, _ = accounts.create_organization(session, "Other Org", "o@example.test", "password-123")
        set_project_quota(session, org.id, project.id, 600, {"transaction": 100, "error": None})
        assert project_quotas(session, [project.id])[project.id].as_dict() == {
            "events_per_minute": 600,
            "categories": {"transaction": 100},
        }
        set_project_quota(session, org.id, project.id, None)  # categories kept when not given
        assert project_quotas(session, [project.id])[project.id].categories == {"transaction": 100}
        with pytest.raises(InvalidInput):
            set_project_quota(session, org.id, project.id, 0)
        with pytest.raises(InvalidInput):
            set_project_quota(session, org.id, project.id, 10, {"profile": 5})
        with pytest.raises(NotFound):
            set_project_quota(session, other.id, project.id, 10)
