"""How a budget is judged: its current value, its status (pass / fail / insufficient data), and its value at
each daily evaluation of the last 30 days. The one implementation behind the `budget_status` asset, the API,
the CLI and the budgets page.

Every value is :mod:`stacklens.performance.window_values`' — the states the performance views read, the window
``[at - window days, at)`` in whole minutes tiled as a view tiles it — so a budget on LCP p75 of
``/checkout`` over 7 days says what the pages view says for ``/checkout`` over those 7 days, and so does an
alert rule on it. The history is the same evaluation at each past midnight, ending with the evaluation the
status is (its last point)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from stacklens.isolation import failure_text, is_shared_outage
from stacklens.metrics import catalog
from stacklens.performance import window_series, window_values

HISTORY_DAYS = 30
# How far back a budget failing for its whole history is followed (the raw layer's default retention).
LOOKBACK_DAYS = 90
PASS: Final = "pass"
FAIL: Final = "fail"
INSUFFICIENT: Final = "insufficient_data"
ERROR: Final = "error"  # the evaluation itself raised: never a verdict on the budget, the error says why


@dataclass(frozen=True)
class BudgetSpec:
    id: int
    project_id: int
    metric: str
    statistic: str
    scope: str
    value: float
    window_days: int
    min_samples: int


@dataclass(frozen=True)
class Evaluation:
    value: float | None  # None: no samples in the window
    samples: int
    status: str  # pass | fail | insufficient_data | error
    margin: float | None  # headroom(): positive = within budget, negative = over it (under it: uptime)
    failing_since: datetime | None  # the first daily evaluation of the current failing run
    error: str = ""  # status "error": why the evaluation failed, in plain words


Point = tuple[datetime, float | None, int]


def judge(value: float | None, samples: int, budget: float, min_samples: int, metric: str = "") -> str:
    """Fewer samples than the minimum (or none) is insufficient data — never a pass. Within budget is at most
    the budget, or at least it for a metric where higher is better (uptime: the catalog's direction)."""
    if value is None or samples < min_samples:
        return INSUFFICIENT
    found = catalog.find(metric)
    within = found.passes(value, budget) if found is not None else value <= budget
    return PASS if within else FAIL


def headroom(metric: str, value: float | None, budget: float) -> float | None:
    """How far the value is on the good side of the budget (negative: over budget, or under it when higher
    is better): ``budget - value``, or ``value - budget`` for a metric where higher is better."""
    if value is None:
        return None
    found = catalog.find(metric)
    return value - budget if found is not None and found.better == "higher" else budget - value


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def request(spec: BudgetSpec) -> window_values.WindowRequest:
    """What a budget measures, as a window request (every budget metric is one of window_values')."""
    return window_values.WindowRequest(
        spec.project_id, spec.metric, spec.statistic, spec.scope, timedelta(days=spec.window_days)
    )


def current_values(client: Any, specs: list[BudgetSpec], now: datetime) -> list[tuple[float | None, int]]:
    """Each budget's value and sample count over its window ending ``now`` (one query per kind of state)."""
    computed = window_values.compute_many(client, [request(s) for s in specs], now)
    return [(w.value, w.samples) for w in computed]


def daily_points(now: datetime, days: int = HISTORY_DAYS) -> list[datetime]:
    """Midnight UTC of each of the last ``days`` days and today's (before ``now``), then ``now`` itself."""
    now = _utc(now)
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    midnights = [today - timedelta(days=d) for d in range(days, -1, -1)]
    return [m for m in midnights if m < now] + [now]


def history(
    client: Any,
    spec: BudgetSpec,
    now: datetime | None = None,
    current: tuple[float | None, int] | None = None,
) -> list[Point]:
    """The budget's value as each daily evaluation of the last 30 days saw it, then the evaluation at
    ``now`` — ``current`` (value, samples) when the caller holds it (the status shown beside the chart), so
    the chart ends on the status's own value."""
    points = daily_points(now or datetime.now(UTC))
    if current is None:
        # One query: the same evaluation at every point (percentiles as compute's, to the bit).
        return window_series.series(client, request(spec), points)
    return [*window_series.series(client, request(spec), points[:-1]), (points[-1], current[0], current[1])]


def failed_days(spec: BudgetSpec, points: list[Point]) -> tuple[int, int]:
    """How many of the daily evaluations would have failed, and how many had enough samples to judge."""
    verdicts = [judge(v, n, spec.value, spec.min_samples, spec.metric) for _, v, n in points]
    return verdicts.count(FAIL), sum(1 for v in verdicts if v != INSUFFICIENT)


def failing_since(spec: BudgetSpec, points: list[Point], now: datetime) -> datetime:
    """The first daily evaluation of the failing run that ends now (today's midnight when only today
    fails)."""
    since = _utc(now).replace(hour=0, minute=0, second=0, microsecond=0)
    for at, value, samples in reversed(points):
        if judge(value, samples, spec.value, spec.min_samples, spec.metric) != FAIL:
            break
        since = min(since, at)
    return since


def failing_start(client: Any, spec: BudgetSpec, points: list[Point], now: datetime) -> datetime:
    """:func:`failing_since`, looked for before the 30 days of ``points`` when the run fills them all: a
    budget failing at every evaluation of the chart started failing before it, and "since" the chart's
    first day named where the chart begins, not when the failing began (issue #47). The days before are
    evaluated at their midnights back to :data:`LOOKBACK_DAYS` (the oldest data the raw layer keeps); only
    budgets failing for the whole history pay for it."""
    since = failing_since(spec, points, now)
    if not points or since > _utc(points[0][0]):
        return since
    first = _utc(points[0][0])
    earlier = [first - timedelta(days=d) for d in range(LOOKBACK_DAYS - HISTORY_DAYS, 0, -1)]
    older = window_series.series(client, request(spec), earlier)
    return failing_since(spec, [*older, *points], now)


def evaluate(client: Any, specs: list[BudgetSpec], now: datetime | None = None) -> list[Evaluation]:
    """Every budget's current value, status and margin; a failing one also since when (its daily history).

    Each budget is its own item (:mod:`stacklens.isolation`): one whose evaluation raises gets the status
    ``error`` with the reason, and the others are judged as usual. Only a warehouse that does not answer
    raises (every budget would fail alike)."""
    now = _utc(now or datetime.now(UTC))
    currents = _current_each(client, specs, now)
    known = _failing_histories(client, specs, currents, now)
    out = []
    for i, (spec, current) in enumerate(zip(specs, currents, strict=True)):
        try:
            if isinstance(current, Exception):
                raise current
            value, samples = current
            status = judge(value, samples, spec.value, spec.min_samples, spec.metric)
            points = (known.get(i) or history(client, spec, now, (value, samples))) if status == FAIL else []
            since = failing_start(client, spec, points, now) if points else None
            margin = headroom(spec.metric, value, spec.value)
            out.append(Evaluation(value, samples, status, margin, since))
        except Exception as exc:
            if is_shared_outage(exc):
                raise
            out.append(failed(exc, spec))
    return out


def histories(
    client: Any, specs: list[BudgetSpec], now: datetime, currents: list[tuple[float | None, int]]
) -> list[list[Point]]:
    """:func:`history` of many budgets at once (each ending on its ``currents`` entry): their evaluations at
    every midnight in one query per 64 distinct windows, not one query per budget."""
    now = _utc(now)
    points = daily_points(now)[:-1]
    found = window_values.compute_at(client, [(request(s), at) for s in specs for at in points])
    out = []
    for n, (value, samples) in enumerate(currents):
        past = found[n * len(points) : (n + 1) * len(points)]
        out.append(
            [*((at, w.value, w.samples) for at, w in zip(points, past, strict=True)), (now, value, samples)]
        )
    return out


def _failing_histories(
    client: Any, specs: list[BudgetSpec], currents: list[tuple[float | None, int] | Exception], now: datetime
) -> dict[int, list[Point]]:
    """The histories of the failing budgets (what failing-since needs) in one go; none when that raises:
    each is then read on its own in :func:`evaluate`'s loop, so the budget that fails is told apart."""
    failing: dict[int, tuple[float | None, int]] = {}
    for i, (spec, current) in enumerate(zip(specs, currents, strict=True)):
        if (
            not isinstance(current, Exception)
            and judge(*current, spec.value, spec.min_samples, spec.metric) == FAIL
        ):
            failing[i] = current
    try:
        found = histories(client, [specs[i] for i in failing], now, list(failing.values()))
    except Exception as exc:
        if is_shared_outage(exc):
            raise
        return {}
    return dict(zip(failing, found, strict=True))


def failed(exc: BaseException, spec: BudgetSpec) -> Evaluation:
    """The evaluation of a budget that could not be evaluated."""
    return Evaluation(None, 0, ERROR, None, None, failure_text(exc, f"the evaluation of budget {spec.id}"))


def _current_each(
    client: Any, specs: list[BudgetSpec], now: datetime
) -> list[tuple[float | None, int] | Exception]:
    """:func:`current_values` in one go; when that raises, budget by budget, so the one that fails is told
    apart (the others lose only the shared query's saving)."""
    try:
        return list(current_values(client, specs, now))
    except Exception as exc:
        if is_shared_outage(exc):
            raise
        if len(specs) == 1:
            return [exc]
    out: list[tuple[float | None, int] | Exception] = []
    for spec in specs:
        try:
            out.append(current_values(client, [spec], now)[0])
        except Exception as exc:
            if is_shared_outage(exc):
                raise
            out.append(exc)
    return out
