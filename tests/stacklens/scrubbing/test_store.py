"""Rules kept on the project: saved only when every rule passes, with a salt made once (a hash stays the same
across saves), recorded in the activity log, and compiled once per distinct set for ingest."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from stacklens.control.db import session_scope
from stacklens.control.models import ActivityEntry
from stacklens.control.projects import project_by_slug
from stacklens.errors import InvalidInput, NotFound
from stacklens.scrubbing.rules import RuleSpec
from stacklens.scrubbing.store import compiled, get_rules, project_rules, set_rules
from stacklens.settings import Settings

HASH = RuleSpec("hash", "email", None, "user.email")
EVENT = {"user": {"email": "a@b.co"}}


def test_rules_are_saved_whole_or_not_at_all(settings: Settings, make_org) -> None:
    org = make_org()
    slug = str(org["project"])
    with session_scope(settings) as session:
        project = project_by_slug(session, slug)
        set_rules(session, project.org_id, project, [HASH])
        first = project_rules(session, project.id).apply(EVENT)["user"]["email"]
        with pytest.raises(InvalidInput, match=r"rules\[1\]\.applies_to"):
            set_rules(session, project.org_id, project, [HASH, RuleSpec("mask", "ip", None, "(")])
        with pytest.raises(NotFound):
            set_rules(session, project.org_id + 999, project, [])
    with session_scope(settings) as session:
        project = project_by_slug(session, slug)
        assert get_rules(project) == [HASH]
        set_rules(session, project.org_id, project, [HASH, RuleSpec("mask", "ip")])
    with session_scope(settings) as session:
        project = project_by_slug(session, slug)
        assert project_rules(session, project.id).apply(EVENT)["user"]["email"] == first  # the same salt
        assert compiled(project.scrubbing) is compiled(dict(project.scrubbing))  # compiled once
        entries = session.scalars(select(ActivityEntry.action).where(ActivityEntry.target_id == project.id))
        assert list(entries).count("scrubbing.changed") == 2
    assert compiled({}).rules == () and compiled({"rules": [{"method": "bad"}]}).rules == ()
