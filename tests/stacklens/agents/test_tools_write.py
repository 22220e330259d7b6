"""The write tools refuse a read token before anything else, and name a bad argument."""

from __future__ import annotations

import pytest

from stacklens.agents import tools_write
from stacklens.agents.context import WriteRefused
from stacklens.errors import InvalidInput, NotFound
from stacklens.settings import Settings
from tests.stacklens.agents.tools_world import tool_context


def test_writes_are_refused_to_read_tokens_and_bad_arguments_named(settings: Settings, make_org) -> None:
    acme = make_org("Acme", "Shop")
    with tool_context(settings, acme, frozenset({"read"})) as ctx:
        for call in (
            lambda: tools_write.update_issue(ctx, "1", status="resolved"),
            lambda: tools_write.comment(ctx, "1", "hi"),
            lambda: tools_write.annotate(ctx, "deploy"),
        ):
            with pytest.raises(WriteRefused, match=r"^scope:"):
                call()
    with tool_context(settings, acme, frozenset({"read", "write"})) as ctx:
        with pytest.raises(NotFound, match=r"^issue_id:"):
            tools_write.update_issue(ctx, "1", status="resolved")
        with pytest.raises(InvalidInput, match="text"):
            tools_write.annotate(ctx, "")
        note = tools_write.annotate(ctx, "Deployed 1.2", project="shop", tags=["deploy"])
        assert note["annotation"]["text"] == "Deployed 1.2" and note["annotation"]["project"] == "shop"
