"""The ``anomaly_bands`` table (warehouse migration 0250; read back by :func:`recent` for the rule page):
every enabled anomaly rule's last day of hourly buckets — value, samples, expected value, band, score,
seasonality and whether it was firing — judged by the same function the evaluation tick decides with
(:func:`stacklens.anomalies.live.judged_day`), from the metrics layer's hourly values. Written by the
``anomaly_bands`` asset; a later run replaces an hour's row. A rule whose series cannot be read is that
rule's error, never the run's (the others are written)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from stacklens.anomalies.live import judged_day
from stacklens.control.db import session_scope
from stacklens.control.models.alerts import AlertRule
from stacklens.isolation import failure_text, is_shared_outage
from stacklens.settings import Settings
from stacklens.warehouse.queries import run_query

COLUMNS = [
    "org_id",
    "project_id",
    "rule_id",
    "bucket",
    "value",
    "samples",
    "expected",
    "lower",
    "upper",
    "score",
    "seasonality",
    "firing",
    "computed_at",
]


@dataclass
class BandsWritten:
    rules: int = 0
    rows: int = 0
    firing: int = 0
    errors: list[str] = field(default_factory=list)


def _number(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def rows_of(rule: Any, client: Any, now: datetime) -> list[list[Any]]:
    """One rule's rows: its last day of hours as the tick judges them."""
    judged = judged_day(client, rule, now)
    series, b, out = judged.series, judged.bands, []
    for j in range(len(series.values) - judged.offset):
        i = judged.offset + j
        out.append(
            [
                rule.org_id,
                rule.project_id,
                rule.id,
                series.time(i).replace(tzinfo=None),
                _number(series.values[i]),
                float(series.counts[i]),
                _number(b.expected[0, j]),
                _number(b.lower[0, j]),
                _number(b.upper[0, j]),
                _number(b.score[0, j]),
                judged.seasonality(j),
                int(judged.replay.firing[0, j]),
                now.replace(tzinfo=None),
            ]
        )
    return out


def write_bands(settings: Settings, client: Any, now: datetime) -> BandsWritten:
    """Judge every enabled anomaly rule's last day and write it to ``anomaly_bands`` (one insert)."""
    with session_scope(settings) as session:
        rules = list(
            session.scalars(select(AlertRule).where(AlertRule.type == "anomaly", AlertRule.enabled.is_(True)))
        )
        session.expunge_all()
    summary, rows = BandsWritten(rules=len(rules)), []
    for rule in rules:
        try:
            got = rows_of(rule, client, now)
        except Exception as exc:
            if is_shared_outage(exc):
                raise
            summary.errors.append(f"{rule.name}: {failure_text(exc, f'the bands of alert rule {rule.id}')}")
            continue
        rows += got
        summary.firing += int(bool(got) and got[-1][11] == 1)
    if rows:
        client.insert("anomaly_bands", rows, column_names=COLUMNS)
    summary.rows = len(rows)
    return summary


@dataclass(frozen=True)
class BandRow:
    """One hour of a rule as the asset judged it (``value`` None: a gap; ``expected`` None: learning)."""

    bucket: datetime
    value: float | None
    samples: float
    expected: float | None
    lower: float | None
    upper: float | None
    score: float | None
    seasonality: str
    firing: bool


def recent(client: Any, org_id: int, rule_id: int, since: datetime) -> list[BandRow]:
    """The rule's hours since ``since`` as the ``anomaly_bands`` asset last wrote them, newest first (48 at
    most); scoped to the organization."""
    rows = run_query(
        client,
        "anomalies/bands",
        {"org_id": org_id, "rule_id": rule_id, "since": since.astimezone(UTC).replace(tzinfo=None)},
    )
    return [
        BandRow(
            r["bucket"].replace(tzinfo=UTC) if r["bucket"].tzinfo is None else r["bucket"],
            r["value"],
            float(r["samples"]),
            r["expected"],
            r["lower"],
            r["upper"],
            r["score"],
            str(r["seasonality"]),
            bool(r["firing"]),
        )
        for r in rows
    ]
