"""Per-project settings: replay on or off and the in-app prefixes, changed only within the project's
organization."""

from __future__ import annotations

from stacklens.control.db import session_scope
from stacklens.control.projects_settings import (
    in_app_rules,
    replay_enabled,
    set_in_app_rules,
    set_replay_enabled,
)
from stacklens.ingest.in_app import NO_RULES, InAppRules
from stacklens.settings import Settings


def test_replay_and_in_app_rules(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme"), make_org("Globex")
    project, org_id = int(acme["project_id"]), int(acme["org_id"])
    with session_scope(settings) as session:
        assert replay_enabled(session, project) is True  # on for a new project
        assert in_app_rules(session, project) == InAppRules((), ())
        assert set_replay_enabled(session, org_id, project, False)
        assert set_in_app_rules(session, org_id, project, InAppRules(("shop",), ("vendor",)))
        # Another organization cannot change this project.
        assert not set_replay_enabled(session, int(other["org_id"]), project, True)
        assert not set_in_app_rules(session, int(other["org_id"]), project, NO_RULES)
    with session_scope(settings) as session:
        assert replay_enabled(session, project) is False
        assert in_app_rules(session, project) == InAppRules(("shop",), ("vendor",))
        # A project that is gone keeps nothing and has no rules.
        assert replay_enabled(session, 10_000) is False and in_app_rules(session, 10_000) == NO_RULES
