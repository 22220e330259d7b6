"""One tool call: who makes it, with which settings, and what it read (rows and bytes, for the audit).

The warehouse client a tool reads through is wrapped (:class:`CountingClient`) so every query's summary
(``read_rows``, ``read_bytes``) adds to the call's :class:`Usage`, whatever read path the tool goes through —
the same paths the pages use (docs/agents.md, "What a call reads").
"""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from typing import Any, cast

from clickhouse_connect.driver.client import Client

from stacklens.agents.tokens import AgentIdentity
from stacklens.settings import Settings


@dataclass
class Usage:
    rows: int = 0
    bytes: int = 0
    queries: int = 0

    def add(self, summary: dict[str, Any] | None) -> None:
        summary = summary or {}
        self.rows += int(summary.get("read_rows", 0) or 0)
        self.bytes += int(summary.get("read_bytes", 0) or 0)
        self.queries += 1


@dataclass
class Call:
    identity: AgentIdentity
    settings: Settings
    client: str = ""
    usage: Usage = field(default_factory=Usage)
    outcome: str = "ok"  # ok | error | refused | over_budget (stacklens.agents.audit.OUTCOMES)
    error: str = ""


current: contextvars.ContextVar[Call | None] = contextvars.ContextVar("stacklens_agent_call", default=None)


def this_call() -> Call:
    """The call being served; tools run only inside one (the door and the audit set it)."""
    call = current.get()
    if call is None:
        raise RuntimeError("no agent call in progress")
    return call


class CountingClient:
    """A warehouse client whose queries count into ``usage``; everything else is the wrapped client's."""

    def __init__(self, inner: Client, usage: Usage) -> None:
        self._inner = inner
        self._usage = usage

    def query(self, *args: Any, **kwargs: Any) -> Any:
        result = self._inner.query(*args, **kwargs)
        self._usage.add(getattr(result, "summary", None))
        return result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def counting(inner: Client, usage: Usage) -> Client:
    return cast(Client, CountingClient(inner, usage))
