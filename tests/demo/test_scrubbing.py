"""The demo project's scrubbing rules: set once by `demo.prepare` (left alone once someone changed them), they
hash the e-mail the shop sends as the user's (the same customer, the same hash) and mask any other address."""

from __future__ import annotations

import re

from demo.scrubbing import ensure_demo_scrubbing
from stacklens.control.db import session_scope
from stacklens.control.projects import project_by_slug
from stacklens.scrubbing.store import get_rules, project_rules, set_rules
from stacklens.settings import Settings


def test_the_demo_rules_are_set_once_and_show_their_effect(settings: Settings, make_org) -> None:
    org = make_org("Demo")
    slug = str(org["project"])
    assert ensure_demo_scrubbing(settings, slug) is True
    with session_scope(settings) as session:
        rules = project_rules(session, int(org["project_id"]))
    event = {
        "user": {"id": "1003", "email": "customer3@example.com"},
        "exception": {"values": [{"type": "ValueError", "value": "no receipt to customer3@example.com"}]},
    }
    out = rules.apply(event)
    assert re.fullmatch(r"[0-9a-f]{16}", out["user"]["email"])
    assert out["user"]["email"] == rules.apply(event)["user"]["email"]
    assert out["exception"]["values"][0]["value"] == "no receipt to " + "*" * len("customer3@example.com")

    with session_scope(settings) as session:
        project = project_by_slug(session, slug)
        set_rules(session, project.org_id, project, [])  # removed by the user: stays removed
    assert ensure_demo_scrubbing(settings, slug) is False
    with session_scope(settings) as session:
        assert get_rules(project_by_slug(session, slug)) == []
