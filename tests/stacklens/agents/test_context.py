"""What a tool reaches: its organization's projects and issues only (another's is as unknown as a missing
one, named by the argument), and writes only with scope write and a role that writes."""

from __future__ import annotations

import pytest

from stacklens.agents.context import WriteRefused
from stacklens.errors import NotFound
from stacklens.settings import Settings
from tests.stacklens.agents.tools_world import tool_context


def test_another_organizations_project_and_issue_are_unknown(settings: Settings, make_org) -> None:
    acme, other = make_org("Acme", "Shop"), make_org("Other", "Secret")
    with tool_context(settings, acme, frozenset({"read"})) as ctx:
        assert ctx.project("SHOP").id == acme["project_id"]
        with pytest.raises(NotFound, match=r"^project: no project 'secret'.*its projects: shop"):
            ctx.project(other["project"])
        with pytest.raises(NotFound, match=r"^issue_id:"):
            ctx.issue("1")


def test_writes_need_scope_write_and_a_writing_role(settings: Settings, make_org) -> None:
    acme = make_org("Acme")
    with (
        tool_context(settings, acme, frozenset({"read"})) as ctx,
        pytest.raises(WriteRefused, match=r"^scope:"),
    ):
        ctx.require_write()
    viewer = tool_context(settings, acme, frozenset({"read", "write"}), role="viewer")
    with viewer as ctx, pytest.raises(WriteRefused, match=r"^role:"):
        ctx.require_write()
    with tool_context(settings, acme, frozenset({"read", "write"})) as ctx:
        ctx.require_write()
        assert ctx.actor == acme["email"]
