"""`GET /api/metrics`: the metric catalog (docs/reference.md) — every metric with its label, unit, statistics,
thresholds, the warehouse states that hold it and how its values are written — so a client names and formats
metrics as the pages do. The same for every organization; authenticated like every API route.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import ApiAuth
from api.routers.auth import AUTH_ERRORS
from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.definition import Metric
from stacklens.metrics.formatting import axis_title, column_name
from stacklens.metrics.reference import example
from stacklens.metrics.statistics import QUANTILE_RELATIVE_ERROR

router = APIRouter(prefix="/api", tags=["metrics"])


class ThresholdsOut(BaseModel):
    good: float = Field(description="Good up to this value (from it when `higher_is_better`).")
    poor: float = Field(description="Poor above this value (below it when `higher_is_better`).")
    higher_is_better: bool
    source: str = Field(description="Whose bands they are, e.g. Google web vitals.")


class StateOut(BaseModel):
    table: str = Field(description="The warehouse table that holds the metric.")
    columns: list[str]
    representation: str = Field(
        description="`log_histogram_1pct` (percentiles within `error`), `sum_count` (exact) or `raw_rows`."
    )
    read_by: str


class StatisticOut(BaseModel):
    key: str = Field(description="`p50`, `p75`, `p90`, `p95`, `p99`, `avg`, `sum`, `min`, `max`, `count`, …")
    label: str
    column: str = Field(description="The CSV column / series name of this statistic, ending with the unit.")


class MetricOut(BaseModel):
    key: str = Field(description="The name budgets, alert rules and the API take (`lcp_ms`, `js_bytes`, …).")
    label: str
    short_label: str
    description: str
    unit: str = Field(description="`ms`, `bytes`, `score`, `percent`, `ratio` or `count`.")
    unit_label: str = Field(description="The unit as written after a raw number: `ms`, `bytes`, `%`, or ''.")
    unit_description: str = Field(description="Bytes say their prefix system: binary (KiB = 1,024 bytes).")
    statistics: list[str] = Field(description="The statistics it may be summarised by.")
    default_statistic: str
    statistic_details: list[StatisticOut]
    thresholds: ThresholdsOut | None = Field(description="Good / poor bands; null when it has none.")
    states: list[StateOut] = Field(description="The warehouse states that hold it, and who reads them.")
    error: float = Field(
        description=f"The largest relative error of a value read from the views' states (0 = exact; "
        f"percentiles from 1 % log histograms: {QUANTILE_RELATIVE_ERROR})."
    )
    aliases: list[str] = Field(description="Other names of the metric (the views' column prefixes).")
    same_as: list[str] | None = Field(description="[metric, statistic] this key is another name for.")
    budget: bool = Field(description="A budget (and an alert rule of type performance_budget) can watch it.")
    better: Literal["lower", "higher"] = Field(
        description="Which way is good: `lower` (times, bytes, error shares) or `higher` (uptime, crash-free, "
        "cache hits, the score). A budget on a `higher` metric passes at or above its value; a rule on it "
        "fires below its threshold."
    )
    kind: str = Field(
        description="The data it comes from: pageloads, resources, api_calls, transactions, errors, sessions or logs."
    )
    axis_title: str = Field(description="How a chart axis or a table header names it: `LCP p75 (ms)`.")
    example: str = Field(description="A value written as the pages write it.")


def metric_out(metric: Metric) -> MetricOut:
    return MetricOut(
        key=metric.key,
        label=metric.label,
        short_label=metric.short_label,
        description=metric.description,
        unit=metric.unit.key,
        unit_label=metric.unit.symbol,
        unit_description=metric.unit.description,
        statistics=list(metric.statistics),
        default_statistic=metric.default_statistic,
        statistic_details=[
            StatisticOut(key=s.key, label=s.label, column=column_name(metric.key, s.key))
            for s in metric.statistic_objects
        ],
        thresholds=ThresholdsOut(
            good=metric.thresholds.good,
            poor=metric.thresholds.poor,
            higher_is_better=metric.thresholds.higher_is_better,
            source=metric.thresholds.source,
        )
        if metric.thresholds
        else None,
        states=[
            StateOut(
                table=s.table, columns=list(s.columns), representation=s.representation, read_by=s.read_by
            )
            for s in metric.states
        ],
        error=metric.error,
        aliases=list(metric.aliases),
        same_as=list(metric.same_as) if metric.same_as else None,
        budget=metric.budget,
        better="higher" if metric.better == "higher" else "lower",
        kind=metric.kind,
        axis_title=axis_title(metric.key),
        example=example(metric),
    )


@router.get("/metrics", response_model=list[MetricOut], responses=AUTH_ERRORS)
def list_metrics(identity: ApiAuth) -> list[MetricOut]:
    """Every metric of the catalog (docs/reference.md: `[{"key", "label", "unit", "statistics", "thresholds",
    …}]`),
    with its states, the stated error of its percentiles and how its values are written."""
    return [metric_out(m) for m in CATALOG.values()]
