"""The tool catalog: every tool's arguments are described, names are unique, and exactly the tools that
change something are marked as writes."""

from __future__ import annotations

import inspect

from api.agents.catalog import ARGUMENTS, TOOLS


def test_every_argument_is_described_and_writes_are_marked() -> None:
    names = [spec.name for spec in TOOLS]
    assert len(names) == len(set(names)) >= 14
    for spec in TOOLS:
        params = list(inspect.signature(spec.fn).parameters)
        assert params[0] == "ctx", spec.name
        missing = [p for p in params[1:] if p not in ARGUMENTS]
        assert not missing, (spec.name, missing)
        assert len(spec.description) > 30
    assert {s.name for s in TOOLS if s.writes} == {"update_issue", "comment_on_issue", "annotate"}
