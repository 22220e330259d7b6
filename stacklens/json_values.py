"""Values as JSON carries them: the one conversion behind every JSON answer and download that holds
warehouse or control-database values (the performance views, the budgets, the releases, the pipeline runs):
times as ISO 8601 in UTC, dates as ISO dates, maps and lists converted element by element. Their CSV is
:func:`stacklens.csv_cells.to_csv` of the same values."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any


def plain(value: Any) -> Any:
    """JSON-ready: datetimes and dates as ISO 8601 (UTC), nested structures converted."""
    if isinstance(value, datetime):
        utc = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return utc.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value
