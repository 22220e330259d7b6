"""The counting client adds every query's rows and bytes read to the call's usage."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stacklens.agents.calls import Usage, counting


@dataclass
class Answer:
    summary: dict[str, Any] = field(default_factory=dict)


class Inner:
    database = "db"

    def query(self, sql: str, parameters: dict[str, Any] | None = None) -> Answer:
        return Answer({"read_rows": "12", "read_bytes": "3400"})


def test_counting_sums_the_summaries() -> None:
    usage = Usage()
    client = counting(Inner(), usage)
    client.query("SELECT 1")
    client.query("SELECT 2", parameters={})
    assert (usage.rows, usage.bytes, usage.queries) == (24, 6800, 2)
    assert client.database == "db"
