"""Cron evaluation for the embedded runner: whether a schedule's cron fires in a given minute.

The Dagster daemon evaluates the same crons in scaled mode; embedded mode asks ``croniter`` (standard
5-field cron: ``*``, ``*/n``, ``a-b``, lists, names) so both agree on when a schedule is due.
"""

from __future__ import annotations

from datetime import UTC, datetime

from croniter import croniter


def cron_due(cron: str, minute: datetime) -> bool:
    """Whether the 5-field ``cron`` fires at ``minute`` (read in UTC, seconds ignored).

    Raises ``ValueError`` naming the expression when it is not a valid 5-field cron.
    """
    if len(cron.split()) != 5 or not croniter.is_valid(cron):
        raise ValueError(f"cron {cron!r} is not a valid 5-field cron expression")
    at = minute.astimezone(UTC) if minute.tzinfo else minute.replace(tzinfo=UTC)
    return bool(croniter.match(cron, at.replace(second=0, microsecond=0)))


__all__ = ["cron_due"]
