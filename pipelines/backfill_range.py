"""The days of a backfill (`stacklens pipelines backfill --from DAY --to DAY`), checked without Dagster: the
command checks them before it calls the server or loads the definitions, and importing Dagster and the
partitions for that cost a command ~1.5 s of CPU (pipelines/backfill.py runs the range)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from stacklens.settings import Settings

RETENTION_DAYS = int(Settings.model_fields["retention_days"].default)
# The first day of the daily partitions (pipelines/partitions.py says why it moves with the clock).
PARTITION_START = (datetime.now(UTC).date() - timedelta(days=RETENTION_DAYS)).isoformat()


class BackfillError(ValueError):
    """A backfill that cannot run as asked; the message names the option (``--from``, ``--to``,
    ``--select``)."""


@dataclass(frozen=True)
class BackfillRange:
    first: date
    last: date  # inclusive

    @property
    def days(self) -> int:
        return (self.last - self.first).days + 1


def parse_range(first: str, last: str, today: date | None = None) -> BackfillRange:
    """Validate ``--from``/``--to`` (ISO dates, both included) against the partitions: the raw layer's last 90
    days and today."""
    today = today or datetime.now(UTC).date()
    parsed = []
    for option, value in (("--from", first), ("--to", last)):
        try:
            parsed.append(date.fromisoformat(value.strip()))
        except ValueError:
            raise BackfillError(f"{option}: {value!r} is not a date (YYYY-MM-DD)") from None
    start, end = parsed
    if end < start:
        raise BackfillError(f"--to: {end} is before --from {start}")
    oldest = date.fromisoformat(PARTITION_START)
    if start < oldest:
        raise BackfillError(
            f"--from: {start} is older than the oldest partition, {oldest} (the raw layer keeps 90 days)"
        )
    if end > today:
        raise BackfillError(f"--to: {end} is after today ({today}); no later day can hold data")
    return BackfillRange(start, end)
