"""The trace tool: an unknown or malformed trace id is named, another organization's trace is unknown."""

from __future__ import annotations

import pytest

from stacklens.agents import tools_traces
from stacklens.errors import InvalidInput, NotFound
from stacklens.settings import Settings
from tests.stacklens.agents.tools_world import tool_context


def test_unknown_and_malformed_trace_ids_are_named(settings: Settings, make_org) -> None:
    acme = make_org("Acme", "Shop")
    with tool_context(settings, acme, frozenset({"read"})) as ctx:
        with pytest.raises(NotFound, match=r"^trace_id:"):
            tools_traces.get_trace(ctx, "a" * 32)
        with pytest.raises(InvalidInput, match="trace_id"):
            tools_traces.get_trace(ctx, "not-a-trace")
