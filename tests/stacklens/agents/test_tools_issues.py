"""The issue tools on an empty project: what they cover, and bad arguments named."""

from __future__ import annotations

import pytest

from stacklens.agents import tools_issues
from stacklens.errors import InvalidInput, NotFound
from stacklens.settings import Settings
from tests.stacklens.agents.tools_world import tool_context


def test_an_empty_list_says_what_it_covers(settings: Settings, make_org) -> None:
    acme = make_org("Acme", "Shop")
    with tool_context(settings, acme, frozenset({"read"})) as ctx:
        answer = tools_issues.list_issues(ctx, "shop", range="24h")
        assert answer["issues"] == [] and answer["next_cursor"] is None
        covers = answer["covers"]
        assert (covers["project"], covers["range"], covers["count"]) == ("shop", "24h", 0)
        assert covers["since"] < covers["until"]
        assert ctx.usage.queries >= 1  # counted for the audit
        with pytest.raises(InvalidInput, match="range"):
            tools_issues.list_issues(ctx, "shop", range="fortnight")
        with pytest.raises(NotFound, match=r"^issue_id:"):
            tools_issues.get_issue(ctx, "12")
        with pytest.raises(NotFound, match=r"^issue_id:"):
            tools_issues.issue_replays(ctx, "12")
        with pytest.raises(NotFound, match=r"^event_id:"):
            tools_issues.get_event(ctx, "f" * 32)
