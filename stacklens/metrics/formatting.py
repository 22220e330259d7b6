"""How a metric's value is written, and how a column or axis holding it is named.

One function per question, so a page, the PDF, the CLI and an alert message write the same value the same way:

- :func:`format_value` — ``2,004.9 ms``, ``250.0 KiB``, ``0.12``, ``3.4 %``, ``1,234`` (``–`` without a
  value);
- :func:`column_name` — a CSV column or series name that carries the unit: ``lcp_p75_ms``,
  ``js_per_view_bytes``;
- :func:`axis_title` — a chart axis or table header: ``LCP p75 (ms)``.

CSV and JSON keep raw numbers (milliseconds, bytes, percent): machine-readable, the unit in the column's name.
"""

from __future__ import annotations

from stacklens.metrics.catalog import get
from stacklens.metrics.definition import Metric
from stacklens.metrics.units import COUNT, RATE_PER_1K, Unit, format_in

_COUNTING = ("count", "rate_per_1k")


def value_unit(metric: Metric, statistic: str | None = None) -> Unit:
    """The unit a statistic of the metric is in: a count is a count, whatever it counts."""
    if statistic == "count":
        return COUNT
    return RATE_PER_1K if statistic == "rate_per_1k" else metric.unit


def format_value(metric_key: str, value: float | int | None, statistic: str | None = None) -> str:
    """``value`` of the metric (key or alias) as every face of the product writes it."""
    metric = get(metric_key)
    unit = value_unit(metric, statistic)
    return format_in(unit, value, metric.decimals if unit is metric.unit else None)


def column_name(metric_key: str, statistic: str | None = None) -> str:
    """The name of a CSV column or series holding the statistic of the metric, ending with its unit:
    ``lcp_p75_ms``, ``load_avg_ms``, ``cls_p75``, ``js_per_view_bytes``, ``error_pct``, ``views``."""
    metric = get(metric_key)
    if metric.same_as is not None:
        return column_name(*metric.same_as)
    stat = statistic or metric.default_statistic
    parts = [metric.column_stem]
    if stat == "rate_per_1k":
        parts.append("per_1k")
    elif not metric.fixed_statistic and stat != "count":
        parts.append(stat)
    suffix = "" if stat in _COUNTING else metric.unit.column_suffix
    if suffix and not parts[-1].endswith(suffix):
        parts.append(suffix)
    return "_".join(parts)


def unit_text(metric_key: str, statistic: str | None = None) -> str:
    """The unit as a reader sees it next to a raw number: ``ms``, ``bytes``, ``%``; '' when it has none."""
    return value_unit(get(metric_key), statistic).symbol


def axis_title(metric_key: str, statistic: str | None = None) -> str:
    """A chart axis or table header: ``LCP p75 (ms)``, ``JavaScript per view (bytes)``, ``CLS p75``."""
    metric = get(metric_key)
    stat = statistic or metric.default_statistic
    words = (
        metric.short_label if metric.fixed_statistic or stat in _COUNTING else f"{metric.short_label} {stat}"
    )
    unit = unit_text(metric_key, stat)
    return f"{words} ({unit})" if unit else words
