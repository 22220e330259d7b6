"""Outcomes as the API and the usage page read them: one organization's counts per hour, project, category,
outcome and reason, over a named range."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from clickhouse_connect.driver.client import Client

from stacklens.errors import InvalidInput
from stacklens.outcomes.counting import CATEGORIES, OUTCOMES
from stacklens.outcomes.tally import write_pending
from stacklens.settings import Settings
from stacklens.warehouse.queries import run_query

RANGES: dict[str, timedelta] = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "14d": timedelta(days=14),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
}
DEFAULT_RANGE = "24h"


@dataclass(frozen=True)
class OutcomeRow:
    hour: datetime  # UTC, the start of the hour
    project_id: int  # 0: an item whose app key named no project of the organization
    project: str | None  # the project's slug (None for project 0 or a project since deleted)
    category: str
    outcome: str
    reason: str
    quantity: int


@dataclass(frozen=True)
class OutcomeQuery:
    """What to read: ``project_id`` 0 and ``category`` '' mean all; ``range`` one of :data:`RANGES`."""

    range: str = DEFAULT_RANGE
    project_id: int = 0
    category: str = ""

    def checked(self) -> OutcomeQuery:
        if self.range not in RANGES:
            raise InvalidInput(f"range must be one of {', '.join(RANGES)}")
        if self.category and self.category not in CATEGORIES:
            raise InvalidInput(f"category must be one of {', '.join(CATEGORIES)}")
        return self


def outcome_rows(
    settings: Settings,
    client: Client,
    org_id: int,
    query: OutcomeQuery,
    slugs: Mapping[int, str],
    now: datetime | None = None,
) -> list[OutcomeRow]:
    """The organization's outcomes in ``query``'s range, oldest hour first; counts this process has not yet
    written are written first, so a reader sees every item answered so far."""
    query = query.checked()
    write_pending(settings)
    until = now or datetime.now(UTC)
    rows = run_query(
        client,
        "outcomes/hours",
        {
            "org_id": org_id,
            "since": until - RANGES[query.range],
            "until": until + timedelta(hours=1),
            "project_id": query.project_id,
            "category": query.category,
        },
    )
    return [
        OutcomeRow(
            hour=row["hour"].replace(tzinfo=UTC) if row["hour"].tzinfo is None else row["hour"],
            project_id=int(row["project_id"]),
            project=slugs.get(int(row["project_id"])),
            category=str(row["category"]),
            outcome=str(row["outcome"]),
            reason=str(row["reason"]),
            quantity=int(row["quantity"]),
        )
        for row in rows
    ]


def totals_by_outcome(rows: list[OutcomeRow]) -> dict[str, int]:
    """Items per outcome, every outcome named (0 when none)."""
    totals: Counter[str] = Counter()
    for row in rows:
        totals[row.outcome] += row.quantity
    return {outcome: totals[outcome] for outcome in OUTCOMES}


def by_reason(rows: list[OutcomeRow]) -> list[tuple[str, str, str, int]]:
    """(outcome, category, reason, items) over the whole range, largest first (the usage page's table)."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for row in rows:
        counts[(row.outcome, row.category, row.reason)] += row.quantity
    return [(o, c, r, n) for (o, c, r), n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]
