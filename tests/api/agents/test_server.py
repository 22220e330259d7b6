"""The MCP server's middleware on a real server with a small call budget: each tool's JSON schema and
description, and a call over `agent_calls_per_minute` answered at once with a structured error naming the
budget and when to retry — audited as `over_budget` — while the organization's other token keeps working; an
Explore call over the agents' share of the server's time (`agent_explore_share`) likewise, while the other
tools answer."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from api.agents.catalog import ARGUMENTS, TOOLS
from stacklens.agents import budget
from stacklens.control.db import migrate_control_store
from stacklens.settings import Settings
from stacklens.warehouse.migrations import apply_migrations
from tests.api.agents.test_door import audit, new_org, personal_token, run_calls, text_of
from tests.api.live import serve
from tests.conftest import make_settings


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, warehouse_url: str) -> Iterator[tuple[str, Settings]]:
    data = tmp_path_factory.mktemp("mcp-budget") / "data"
    data.mkdir()
    store = make_settings(data, warehouse_url, agent_calls_per_minute=3)
    migrate_control_store(store)
    apply_migrations(store)
    with serve(store) as url:
        yield url, store


def test_over_the_call_budget_answers_a_structured_error(server: tuple[str, Settings]) -> None:
    url, store = server
    org = new_org(url, store, "Acme")
    busy, calm = personal_token(url, org, ["read"]), personal_token(url, org, ["read"])
    call = ("monitors", {"project": org["project"]})
    tools, *answers = run_calls(url, busy["token"], [call] * 4)
    assert [a.is_error for a in answers] == [False, False, False, True]
    refused: dict[str, Any] = json.loads(text_of(answers[-1]))
    assert refused["error"] == "over_budget" and refused["budget"] == "agent_calls_per_minute"
    assert refused["limit"] == 3 and 0 < refused["retry_after_s"] <= 60
    _, other = run_calls(url, calm["token"], [call])
    assert not other.is_error
    outcomes = [e["detail"]["outcome"] for e in audit(url, org)]
    assert outcomes.count("over_budget") == 1 and outcomes.count("ok") == 4
    listed = {t.name: t for t in tools.tools}
    assert set(listed) == {spec.name for spec in TOOLS}
    for spec in TOOLS:
        tool = listed[spec.name]
        assert tool.description == spec.description
        for name, schema in tool.input_schema["properties"].items():
            assert schema.get("description") == ARGUMENTS[name], (spec.name, name)


def test_an_explore_call_over_the_agents_share_answers_a_structured_error(
    tmp_path_factory: pytest.TempPathFactory, warehouse_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "EXPLORE_BURST_S", 0.0)  # nothing in hand: every question is over the share
    data = tmp_path_factory.mktemp("mcp-share") / "data"
    data.mkdir()
    store = make_settings(data, warehouse_url, agent_explore_share=0.5)
    migrate_control_store(store)
    apply_migrations(store)
    with serve(store) as url:
        org = new_org(url, store, "Acme")
        token = personal_token(url, org, ["read"])["token"]
        question = {
            "dataset": "errors",
            "group_by": ["release"],
            "aggregates": [{"fn": "count"}],
            "range": "7d",
        }
        calls = [("explore", {"question": question}), ("monitors", {"project": org["project"]})]
        _, refused, other = run_calls(url, token, calls)
        assert refused.is_error and not other.is_error
        answer: dict[str, Any] = json.loads(text_of(refused))
        assert answer["error"] == "over_budget" and answer["budget"] == "agent_explore_share"
        assert answer["limit"] == 0.5 and answer["retry_after_s"] >= 0
        assert "agent_explore_share" in answer["detail"]
        outcomes = [(e["detail"]["tool"], e["detail"]["outcome"]) for e in audit(url, org)]
        assert sorted(outcomes) == [("explore", "over_budget"), ("monitors", "ok")]


def test_making_the_server_leaves_the_process_logging_alone(settings: Settings) -> None:
    """The SDK's server would install a Rich handler on a bare root logger (logging.basicConfig): every record
    of the process rendered by Rich, the server's own lines twice. The root keeps what it had."""
    import logging

    from api.agents.server import build_server

    root = logging.getLogger()
    before, level = list(root.handlers), root.level
    saved = root.handlers[:]
    root.handlers.clear()  # a bare root, as `stacklens serve` has it
    try:
        build_server(settings)
        assert root.handlers == [] and root.level == level
    finally:
        root.handlers[:] = saved
    assert root.handlers == before
