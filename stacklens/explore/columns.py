"""How Explore's answer reads on the page: each column's header with its unit and each value written through
the metric catalog (``2,004.9 ms``, ``245.0 KiB``, ``1,234``), as every other face of the product writes them.

The JSON, CSV and Parquet answers keep raw numbers in the catalog's unit, the unit in the column's name
(``lcp_p75_ms``, :func:`stacklens.metrics.formatting.column_name`); this module is for people reading a table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stacklens.explore.datasets import NUMBER
from stacklens.explore.query import Aggregate, Query
from stacklens.metrics.catalog import get
from stacklens.metrics.formatting import axis_title, format_value
from stacklens.metrics.units import COUNT, MISSING, format_in, plain_number

GROUP = "group"
AGGREGATE = "aggregate"
SAMPLES = "samples"
PREVIOUS = "previous"  # an aggregate's value in the compared window
CHANGE = "change"  # the change from it, in per cent


@dataclass(frozen=True)
class Column:
    key: str  # the answer's column name: release, lcp_p75_ms, samples
    header: str  # what the table and the chart's axis say: "LCP p75 (ms)"
    kind: str  # GROUP, AGGREGATE or SAMPLES
    aggregate: Aggregate | None = None
    number: bool = False  # a group field that holds numbers (an HTTP status, an issue id)

    def format(self, value: Any) -> str:
        """The value as the page writes it (``–`` when there is none)."""
        if value is None:
            return MISSING
        if self.kind == GROUP:
            if self.number and isinstance(value, int | float):
                return plain_number(value)
            return str(value)
        if self.kind == CHANGE:
            return f"{value:+,.1f} %"
        if self.aggregate is None:
            return format_in(COUNT, value)
        return format_aggregate(self.aggregate, value)


def header(aggregate: Aggregate) -> str:
    """The header of an aggregate's column, its unit in brackets: ``LCP p75 (ms)``, ``Size sum (bytes)``,
    ``Errors (per 1,000)``, ``Count``, ``LCP count``, ``Unique users``."""
    if aggregate.fn == "unique_users":
        return "Unique users"
    if aggregate.fn == "rate_per_1k":
        return axis_title("error_events", "rate_per_1k")
    if aggregate.fn == "count":
        if not aggregate.metric:
            return "Count"
        metric = get(aggregate.metric)
        return metric.short_label if metric.fixed_statistic else f"{metric.short_label} count"
    return axis_title(aggregate.metric, aggregate.fn)


def format_aggregate(aggregate: Aggregate, value: float | int | None) -> str:
    """An aggregate's value in the catalog's unit and formatting: counts with separators, times in ms,
    sizes in binary units (KiB, MiB), rates per 1,000."""
    if aggregate.fn in ("count", "unique_users"):
        return format_in(COUNT, value)
    if aggregate.fn == "rate_per_1k":
        return format_value("error_events", value, "rate_per_1k")
    return format_value(aggregate.metric, value, aggregate.fn)


def columns_of(query: Query) -> list[Column]:
    """The answer's columns in order, as the page shows them."""
    out = [
        Column(
            name,
            name,
            GROUP,
            number=not name.startswith("tag:") and query.dataset.fields[name].type == NUMBER,
        )
        for name in query.group_by
    ]
    out += [Column(a.column, header(a), AGGREGATE, a) for a in query.aggregates]
    out.append(Column("samples", "Samples", SAMPLES))
    return out


def compared_columns_of(query: Query) -> list[Column]:
    """The columns of an answer with ``compare``: beside each aggregate its previous value and the change."""
    out = []
    for column in columns_of(query):
        out.append(column)
        if column.kind == AGGREGATE and column.aggregate is not None:
            out.append(Column(column.key + "_previous", "Previous", PREVIOUS, column.aggregate))
            # The change keeps its aggregate: its wording (points or per cent) and tone follow the metric.
            out.append(Column(column.key + "_change_pct", "Change", CHANGE, column.aggregate))
    return out
