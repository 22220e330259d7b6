from __future__ import annotations

import pytest

from stacklens.control import accounts
from stacklens.control.db import session_scope
from stacklens.control.project_quotas import project_quotas, remembered_project_quota, set_project_quota
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
            "attachment_bytes": None,
        }
        set_project_quota(session, org.id, project.id, None)  # categories kept when not given
        assert project_quotas(session, [project.id])[project.id].categories == {"transaction": 100}
        # The attachment quota beside them: kept when not given, not a category limited per minute.
        set_project_quota(session, org.id, project.id, None, attachment_bytes=2048)
        set_project_quota(session, org.id, project.id, 50, {"log": 10})
        quota = project_quotas(session, [project.id])[project.id]
        assert (quota.attachment_bytes, quota.categories) == (2048, {"log": 10})
        assert quota.attachment_quota(control_settings) == 2048
        with pytest.raises(InvalidInput, match="attachment_bytes"):
            set_project_quota(session, org.id, project.id, None, attachment_bytes=-5)
        with pytest.raises(InvalidInput):
            set_project_quota(session, org.id, project.id, 0)
        with pytest.raises(InvalidInput):
            set_project_quota(session, org.id, project.id, 10, {"profile": 5})
        with pytest.raises(NotFound):
            set_project_quota(session, other.id, project.id, 10)


def test_the_remembered_quota_follows_a_change_made_through_this_process(control_settings: Settings) -> None:
    with session_scope(control_settings) as session:
        org, _ = accounts.create_organization(session, "Remembered Org", "r@example.test", "password-123")
        project, _ = create_project(session, org.id, "Shop")
        org_id, project_id = org.id, project.id
    first = remembered_project_quota(control_settings, project_id)
    assert first is not None and first.events_per_minute is None
    assert remembered_project_quota(control_settings, project_id) is first  # read once, reused
    with session_scope(control_settings) as session:
        set_project_quota(session, org_id, project_id, 120, {"error": 60})
    changed = remembered_project_quota(control_settings, project_id)
    assert changed is not None and (changed.events_per_minute, changed.categories) == (120, {"error": 60})
    assert remembered_project_quota(control_settings, project_id + 1000) is None  # no such project
