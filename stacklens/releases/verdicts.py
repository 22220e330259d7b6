"""Honest release verdicts: a release is a regression only when one of its rates is worse than the previous
release's by more than a stated effect size *and* the difference is significant at 95 % (:mod:`.stats`), each
release having a minimum sample. Otherwise the verdict says "no significant change" and shows both counts.

One table of rules (:data:`RULES`) serves the release health pages, the releases API, the Release impact view
of the performance pages, the PDF and the alert rules; docs/releases.md states it. Every reason names the
metric, both values and both sample sizes, so a reader can check it.

The tests, per kind of figure:

- a share of sessions or users (crash-free sessions and users, errored sessions): the pooled two-proportion
  z-test;
- errors per 1,000 page loads: the conditional test of two Poisson rates (exact binomial up to 1,000 errors);
- load time p75 and API time p95: the distribution-free 95 % confidence intervals of the two percentiles, from
  their histograms; worse when they do not overlap (a test at 95 % or stricter);
- JavaScript bytes per page view: the relative change alone, with a minimum of page loads — a release serves
  the same bundles to every page view, so the bytes barely vary and no test is needed (the states keep no
  per-view spread to test with).

A verdict depends on the two releases' counts, so as traffic arrives it moves only as far as their confidence
intervals allow; a release with too few samples is "too few samples", never a regression.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from stacklens.metrics.formatting import format_value
from stacklens.metrics.units import number
from stacklens.releases.stats import ALPHA, QuantileInterval, poisson_rates, two_proportions

REGRESSION = "regression"
IMPROVEMENT = "improvement"
NO_CHANGE = "no significant change"
TOO_FEW = "too few samples"
PROPORTION, POISSON, QUANTILE, RELATIVE = "proportion", "poisson", "quantile", "relative"


@dataclass(frozen=True)
class Rule:
    """How one figure is compared: its test, the effect size a regression must exceed (percentage points for
    shares, percent of the previous value otherwise) and the samples each release needs."""

    key: str  # the field of the release rows
    label: str  # "crash-free sessions"
    metric: str  # the catalog key its values are written with
    kind: str
    effect: float
    min_samples: int
    samples: str  # what the sample counts: "sessions", "page loads"
    statistic: str | None = None  # the catalog statistic it is written with (rate_per_1k)

    @property
    def effect_text(self) -> str:
        return (
            f"{number(self.effect, 1)} points" if self.kind == PROPORTION else f"{number(self.effect, 0)} %"
        )


RULES: tuple[Rule, ...] = (
    Rule(
        "crash_free_sessions", "crash-free sessions", "crash_free_sessions", PROPORTION, 0.5, 100, "sessions"
    ),
    Rule("crash_free_users", "crash-free users", "crash_free_users", PROPORTION, 0.5, 50, "users"),
    Rule(
        "errored_sessions_pct", "errored sessions", "errored_sessions_pct", PROPORTION, 2.0, 100, "sessions"
    ),
    Rule(
        "errors_per_1k_page_loads",
        "errors per 1,000 page loads",
        "error_events",
        POISSON,
        25.0,
        100,
        "page loads",
        "rate_per_1k",
    ),
    Rule("load_p75", "load time p75", "load_time_ms", QUANTILE, 10.0, 100, "page loads"),
    Rule("api_p95", "API time p95", "api_p95_ms", QUANTILE, 10.0, 100, "API calls"),
    Rule("js_bytes_per_view", "JavaScript per page view", "js_bytes", RELATIVE, 10.0, 20, "page loads"),
)
RULE_BY_KEY = {rule.key: rule for rule in RULES}


@dataclass(frozen=True)
class Figures:
    """What the verdict compares of one release; a figure without samples (0) is not compared."""

    version: str
    sessions: int = 0
    crashed_sessions: int = 0
    errored_sessions: int = 0
    users: int = 0
    crashed_users: int = 0
    page_loads: int = 0
    error_events: int = 0
    load_p75: QuantileInterval | None = None
    api_p95: QuantileInterval | None = None
    js_bytes_per_view: float | None = None
    # Set when the session figures reach back before the window, to this first session, and when the
    # performance figures do, to this first page load or error (stacklens.releases.health).
    sessions_since: datetime | None = None
    page_loads_since: datetime | None = None

    def counts(self, key: str) -> tuple[int, int]:
        """(bad events, samples) of a share or a rate: crashed sessions of sessions, errors of page loads."""
        return {
            "crash_free_sessions": (self.crashed_sessions, self.sessions),
            "crash_free_users": (self.crashed_users, self.users),
            "errored_sessions_pct": (self.errored_sessions, self.sessions),
            "errors_per_1k_page_loads": (self.error_events, self.page_loads),
        }[key]

    def value(self, key: str) -> float | None:
        """The figure as the pages show it (percent, per 1,000, ms, bytes); None without samples."""
        if key in ("crash_free_sessions", "crash_free_users", "errored_sessions_pct"):
            bad, n = self.counts(key)
            share = 100.0 * bad / n if n else None
            return None if share is None else (share if key == "errored_sessions_pct" else 100.0 - share)
        if key == "errors_per_1k_page_loads":
            bad, n = self.counts(key)
            return 1000.0 * bad / n if n else None
        if key in ("load_p75", "api_p95"):
            interval = self.interval(key)
            return interval.value if interval else None
        return self.js_bytes_per_view if self.page_loads else None

    def interval(self, key: str) -> QuantileInterval | None:
        return self.load_p75 if key == "load_p75" else self.api_p95

    def samples(self, key: str) -> int:
        if key in ("crash_free_sessions", "errored_sessions_pct"):
            return self.sessions
        if key == "crash_free_users":
            return self.users
        if key == "api_p95":
            return self.api_p95.samples if self.api_p95 else 0
        return self.page_loads


@dataclass(frozen=True)
class Comparison:
    """One figure of a release against the previous release's."""

    metric: str
    label: str
    current: float | None
    previous: float | None
    current_samples: int
    previous_samples: int
    change: float | None  # percentage points for shares, percent of the previous value otherwise
    change_unit: str  # "points" or "%"
    p_value: float | None  # None for the interval and relative comparisons
    outcome: str
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass(frozen=True)
class Verdict:
    regression: bool
    reasons: tuple[str, ...]
    previous_release: str = ""
    comparisons: tuple[Comparison, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict[str, Any]:
        """``{"regression", "reasons", "previous_release", "comparisons"}`` as the API answers it."""
        return {
            "regression": self.regression,
            "reasons": list(self.reasons),
            "previous_release": self.previous_release,
            "comparisons": [c.as_dict() for c in self.comparisons],
        }

    def outcome(self, metric: str) -> str:
        """The outcome of one figure's comparison ('' when it was not compared)."""
        return next((c.outcome for c in self.comparisons if c.metric == metric), "")


def _written(rule: Rule, value: float | None) -> str:
    return format_value(rule.metric, value, rule.statistic)


def _side(rule: Rule, figures: Figures) -> str:
    """``96.20 % (1,204 sessions)``; a percentile with its interval: ``1,450.0 ms (95 % CI …, 1,234 page
    loads)``."""
    count = f"{number(figures.samples(rule.key), 0)} {rule.samples}"
    since = figures.sessions_since if rule.samples in ("sessions", "users") else figures.page_loads_since
    if since is not None:
        count += f" since {since:%Y-%m-%d}, before this window"
    interval = figures.interval(rule.key) if rule.kind == QUANTILE else None
    if interval is not None:
        low, high = _written(rule, interval.low), _written(rule, interval.high)
        return f"{_written(rule, interval.value)} (95 % CI {low} to {high}, {count})"
    return f"{_written(rule, figures.value(rule.key))} ({count})"


def _p_text(p_value: float | None) -> str:
    if p_value is None:
        return ""
    return ", p < 0.001" if p_value < 0.001 else f", p = {p_value:.3f}"


def compare(rule: Rule, current: Figures, previous: Figures) -> Comparison | None:
    """The comparison of one figure, or None when neither release has samples of it."""
    n1, n2 = previous.samples(rule.key), current.samples(rule.key)
    if n1 == 0 and n2 == 0:
        return None
    now, before = current.value(rule.key), previous.value(rule.key)
    both = f"{_side(rule, current)} vs {_side(rule, previous)} in {previous.version}"
    unit = "points" if rule.kind == PROPORTION else "%"
    if min(n1, n2) < rule.min_samples or now is None or before is None:
        reason = (
            f"{rule.label}: too few {rule.samples} to compare ({number(n2, 0)} vs {number(n1, 0)}; "
            f"at least {number(rule.min_samples, 0)} each)"
        )
        return Comparison(rule.key, rule.label, now, before, n2, n1, None, unit, None, TOO_FEW, reason)
    # Worse is higher, except for the crash-free shares.
    sign = -1.0 if rule.key.startswith("crash_free") else 1.0
    change: float | None
    if rule.kind == PROPORTION:
        change = now - before
        worse = sign * change
    elif before:
        change = 100.0 * (now - before) / before
        worse = change
    else:  # from nothing: no relative change to state; any increase exceeds every effect size
        change = None
        worse = math.inf if now > before else 0.0
    p_value: float | None = None
    if rule.kind == PROPORTION:
        p_value = two_proportions(*previous.counts(rule.key), *current.counts(rule.key)).p_value
        significant = p_value < ALPHA
    elif rule.kind == POISSON:
        (k1, t1), (k2, t2) = previous.counts(rule.key), current.counts(rule.key)
        p_value = poisson_rates(k1, t1, k2, t2).p_value
        significant = p_value < ALPHA
    elif rule.kind == QUANTILE:
        a, b = current.interval(rule.key), previous.interval(rule.key)
        significant = a is not None and b is not None and (a.low > b.high or a.high < b.low)
    else:
        significant = True  # the relative change alone decides (see the module's docstring)
    if change is None:
        shown = "up from 0" if now > before else "0 in both"
    else:
        size = number(abs(change), 1)
        shown = f"{'' if size == '0.0' else ('+' if change >= 0 else '−')}{size} {unit}"
    if significant and worse > rule.effect:
        outcome, text = REGRESSION, f"{rule.label} {both}: {shown}{_p_text(p_value)}"
        text += f" (worse by more than {rule.effect_text})"
    elif significant and -worse > rule.effect:
        outcome, text = IMPROVEMENT, f"{rule.label} improved: {both}: {shown}{_p_text(p_value)}"
    else:
        # Not significant, or significant but within the effect size: no change a verdict should report.
        lead = f"{rule.label} changed by less than {rule.effect_text}" if significant else ""
        lead = lead or f"no significant change in {rule.label}"
        outcome, text = NO_CHANGE, f"{lead}: {both}: {shown}{_p_text(p_value)}"
    return Comparison(rule.key, rule.label, now, before, n2, n1, change, unit, p_value, outcome, text)


def verdict(current: Figures, previous: Figures | None, rules: tuple[Rule, ...] = RULES) -> Verdict:
    """The verdict of ``current`` against the release before it (None: the first release, nothing to
    compare)."""
    if previous is None:
        return Verdict(False, ("the first release in this window: no previous release to compare with",))
    comparisons = tuple(c for c in (compare(r, current, previous) for r in rules) if c is not None)
    regressions = tuple(c.reason for c in comparisons if c.outcome == REGRESSION)
    if regressions:
        return Verdict(True, regressions, previous.version, comparisons)
    reasons = tuple(c.reason for c in comparisons) or (f"nothing to compare with {previous.version}",)
    return Verdict(False, reasons, previous.version, comparisons)
