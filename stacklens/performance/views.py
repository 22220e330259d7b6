"""The performance views as one dictionary each, shared by the dashboard pages and the JSON API so both show
the same numbers for the same filters: ``{"rows": [...], <extra parts>}``. Also the CSV and JSON shaping of
rows (dates as ISO 8601, lists and maps as JSON text in CSV cells).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.csv_cells import csv_text
from stacklens.errors import InvalidInput
from stacklens.performance import network, reads
from stacklens.performance.filters import PerfFilters
from stacklens.performance.recommendations import recommendations

VIEWS = ("overview", "pages", "resources", "endpoints", "trends", "releases", "recommendations")


def build(
    view: str,
    client: Client,
    org_id: int,
    project_id: int,
    filters: PerfFilters,
    sort: str = "calls",
    include_old: bool = False,
) -> dict[str, Any]:
    """The data of one view; ``sort`` applies to endpoints (raises ValueError naming the allowed values),
    ``include_old`` to recommendations (those about resources only old releases served; left out by default, and
    counted in ``old_releases_hidden``)."""
    if view == "overview":
        total, pages, days = reads.overview(client, org_id, project_id, filters)
        top = sorted(pages, key=lambda r: -r["opportunity"])[:10]
        return {
            "rows": reads.vitals_summary(total),
            "total": total,
            "opportunities": [
                {
                    "page": r["page"],
                    "views": r["views"],
                    "score": r["score"],
                    "score_n": r["score_n"],
                    "opportunity": r["opportunity"],
                }
                for r in top
            ],
            "daily": days,
        }
    if view == "pages":
        total, pages = reads.pages(client, org_id, project_id, filters)
        return {"rows": pages, "total": total}
    if view == "resources":
        types, listing = network.resource_tables(client, org_id, project_id, filters)
        return {"rows": types, "resources": listing}
    if view == "endpoints":
        return {"rows": network.endpoints(client, org_id, project_id, filters, sort)}
    if view == "trends":
        weeks, page_weeks = reads.trends(client, org_id, project_id, filters)
        return {"rows": weeks, "pages": page_weeks}
    if view == "releases":
        return {"rows": reads.releases(client, org_id, project_id, filters)}
    if view == "recommendations":
        every = recommendations(client, org_id, project_id, filters, include_old=True)
        shown = [r for r in every if include_old or not r["old_release"]]
        return {"rows": shown, "old_releases_hidden": len(every) - len(shown)}
    raise ValueError(f"view must be one of {', '.join(VIEWS)}")


TRUE, FALSE = ("1", "true", "yes", "on"), ("", "0", "false", "no", "off")


def flag(name: str, value: str) -> bool:
    """A yes/no query parameter (``1``/``true``/``yes``/``on`` or ``0``/``false``/``no``/``off``, empty = no);
    InvalidInput naming ``name`` for anything else."""
    text = value.strip().lower()
    if text in TRUE or text in FALSE:
        return text in TRUE
    raise InvalidInput(f"{name}: must be true or false, not {value[:40]!r}")


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


def to_csv(rows: list[dict[str, Any]]) -> str:
    """The rows as CSV: one column per key of the first row; lists and maps as JSON text; text cells
    neutralised against formulas (:mod:`stacklens.csv_cells`)."""
    if not rows:
        return ""
    return csv_text(list(rows[0].keys()), [plain(row) for row in rows])
