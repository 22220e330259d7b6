"""The performance score (0-100) and the web-vital ratings.

Score of one page load: each web vital it carries gets a log-normal score (Lighthouse's curve: 0.9 at the
`p10` control point, 0.5 at the `median` one), the scores are averaged with the weights LCP 30, INP 30, FCP
15, CLS 15, TTFB 10 renormalised over the vitals that page load actually has (Safari sends no LCP, INP or CLS
and is not penalised for it), and times 100. A page's or project's score is the mean over its page loads.
Mobile page loads (Android, iOS) use Lighthouse's mobile control points, the others its desktop ones.

The warehouse computes the same formula per page load (queries/performance/*.sql take :func:`sql_parameters`);
:func:`page_load_score` is the Python statement of it, used by the tests as the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from stacklens.metrics.catalog import CATALOG, web_vitals

# Google's web-vitals thresholds (good up to the first, poor above the second), ms except CLS (unitless), by
# the vitals' short names: the metric catalog's (stacklens.metrics), which docs/performance.md's table is
# checked against.
THRESHOLDS: dict[str, tuple[float, float]] = {
    name: (m.thresholds.good, m.thresholds.poor) for name, m in web_vitals().items() if m.thresholds
}
WEIGHTS: dict[str, float] = {"lcp": 30.0, "inp": 30.0, "fcp": 15.0, "cls": 15.0, "ttfb": 10.0}
VITAL_LABELS = {name: m.short_label for name, m in web_vitals().items()}
MOBILE_OS = ("Android", "iOS", "iPadOS")
# Below this many samples a figure is shown greyed: too few to trust, never hidden.
MIN_SAMPLES = 20


@dataclass(frozen=True)
class ControlPoints:
    p10: float  # value scoring 0.9
    median: float  # value scoring 0.5


# Lighthouse 10 control points (desktop and mobile); INP and TTFB as Sentry's web-vitals score uses them.
CONTROL_POINTS: dict[str, dict[str, ControlPoints]] = {
    "desktop": {
        "lcp": ControlPoints(1200.0, 2400.0),
        "fcp": ControlPoints(934.0, 1600.0),
        "cls": ControlPoints(0.1, 0.25),
        "inp": ControlPoints(200.0, 500.0),
        "ttfb": ControlPoints(800.0, 1800.0),
    },
    "mobile": {
        "lcp": ControlPoints(2500.0, 4000.0),
        "fcp": ControlPoints(1800.0, 3000.0),
        "cls": ControlPoints(0.1, 0.25),
        "inp": ControlPoints(200.0, 500.0),
        "ttfb": ControlPoints(800.0, 1800.0),
    },
}
_INVERSE_ERFC_ONE_FIFTH = 0.9061938024368232  # erfc^-1(0.2): puts the p10 control point at score 0.9


def vital_score(value: float, points: ControlPoints) -> float:
    """Lighthouse's log-normal score of one value, in [0, 1]."""
    if value <= 0:
        return 1.0
    standardized = (
        math.log(value / points.median) * _INVERSE_ERFC_ONE_FIFTH / -math.log(points.p10 / points.median)
    )
    return (1.0 - math.erf(standardized)) / 2.0


def page_load_score(vitals: dict[str, float], mobile: bool = False) -> float | None:
    """Score 0-100 of one page load from the vitals it has; ``None`` when it has none of the five."""
    points = CONTROL_POINTS["mobile" if mobile else "desktop"]
    present = [name for name in WEIGHTS if name in vitals]
    if not present:
        return None
    total = sum(WEIGHTS[name] * vital_score(vitals[name], points[name]) for name in present)
    return 100.0 * total / sum(WEIGHTS[name] for name in present)


def rating(vital: str, value: float | None) -> str:
    """good / needs improvement / poor by Google's thresholds; '' without a value."""
    if value is None:
        return ""
    good, poor = THRESHOLDS[vital]
    if value <= good:
        return "good"
    return "needs improvement" if value <= poor else "poor"


def score_rating(score: float | None) -> str:
    """Lighthouse's bands for a score: 90+ good, 50-89 needs improvement, below 50 poor."""
    bands = CATALOG["score"].thresholds
    return bands.rating(score) if bands is not None else ""


def sql_parameters() -> dict[str, float]:
    """The control points and weights as the score expression's query parameters (``lcp_p10_d`` …)."""
    out: dict[str, float] = {}
    for kind, suffix in (("desktop", "d"), ("mobile", "m")):
        for vital, points in CONTROL_POINTS[kind].items():
            out[f"{vital}_p10_{suffix}"] = points.p10
            out[f"{vital}_med_{suffix}"] = points.median
    for vital, weight in WEIGHTS.items():
        out[f"w_{vital}"] = weight
    return out


def opportunity(page_views: int, page_score: float | None, total_views: int) -> float:
    """How many points the project score (mean over page loads) gains if this page's loads all scored 100."""
    if page_score is None or total_views <= 0:
        return 0.0
    return page_views * (100.0 - page_score) / total_views
