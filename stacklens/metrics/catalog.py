"""Every metric of the product, defined once: key, label, unit, the statistics it allows, the warehouse states
that hold it, its good / poor thresholds and how its values are written.

The performance views, budgets, alert rules, exports, the PDF, the CLI, ``GET /api/metrics`` and the metric
table of docs/performance.md take their names, units and formatting from here; the budget and rule definitions
(:mod:`stacklens.performance.budget_rules`) are views of it.

Keys are the names budgets and alert rules have always used (``lcp_ms``, ``js_bytes``, ``api_p95_ms`` …): they
are stored in rules and budgets and sent by API clients, so they stay valid. ``aliases`` are the short names
the views' columns and the web-vital tables use (``lcp``, ``load``).

What a metric is lives in :mod:`stacklens.metrics.definition`; the metrics themselves, one module per kind
of data (page loads, API calls, resources, errors and logs, sessions), in
``stacklens/metrics/*_metrics.py``; here they are put together in one order, the catalog's."""

from __future__ import annotations

from stacklens.metrics.api_metrics import API_METRICS
from stacklens.metrics.definition import Metric
from stacklens.metrics.error_metrics import ERROR_METRICS
from stacklens.metrics.interaction_metrics import INTERACTION_METRICS
from stacklens.metrics.monitor_metrics import MONITOR_METRICS
from stacklens.metrics.page_load_metrics import PAGE_LOAD_METRICS
from stacklens.metrics.resource_metrics import RESOURCE_METRICS
from stacklens.metrics.session_metrics import SESSION_METRICS

_METRICS: tuple[Metric, ...] = (
    *PAGE_LOAD_METRICS,
    *INTERACTION_METRICS,
    *API_METRICS,
    *RESOURCE_METRICS,
    *ERROR_METRICS,
    *SESSION_METRICS,
    *MONITOR_METRICS,
)

CATALOG: dict[str, Metric] = {m.key: m for m in _METRICS}
ALIASES: dict[str, str] = {alias: m.key for m in _METRICS for alias in m.aliases}


class UnknownMetric(KeyError):
    """A key that is neither a metric nor an alias of one."""

    def __str__(self) -> str:
        return f"unknown metric {self.args[0]!r}; use one of {', '.join(CATALOG)}"


def get(key: str) -> Metric:
    """The metric of a key or alias; :class:`UnknownMetric` otherwise."""
    found = CATALOG.get(key) or CATALOG.get(ALIASES.get(key, ""))
    if found is None:
        raise UnknownMetric(key)
    return found


def find(key: str) -> Metric | None:
    """The metric of a key or alias, ``None`` for anything else."""
    return CATALOG.get(key) or CATALOG.get(ALIASES.get(key, ""))


def budget_metrics() -> dict[str, Metric]:
    """The metrics a budget can be set on, in the catalog's order."""
    return {k: m for k, m in CATALOG.items() if m.budget}


def web_vitals() -> dict[str, Metric]:
    """The five web vitals by their short name (``lcp`` …), in the performance score's order."""
    return {m.column_stem: m for m in (CATALOG[k] for k in ("lcp_ms", "inp_ms", "cls", "fcp_ms", "ttfb_ms"))}
