"""The metric catalog: every metric once (:mod:`.catalog`), its units (:mod:`.units`), statistics
(:mod:`.statistics`) and how its values and columns are written (:mod:`.formatting`)."""

from __future__ import annotations

from stacklens.metrics.catalog import CATALOG, UnknownMetric, find, get
from stacklens.metrics.definition import Metric, Thresholds
from stacklens.metrics.formatting import axis_title, column_name, format_value, unit_text
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR, STATISTICS

__all__ = [
    "CATALOG",
    "QUANTILE_RELATIVE_ERROR",
    "STATISTICS",
    "Metric",
    "Thresholds",
    "UnknownMetric",
    "axis_title",
    "column_name",
    "find",
    "format_value",
    "get",
    "unit_text",
]
