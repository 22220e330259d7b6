"""The catalog's metrics of INP causes: the parts of the reported interactions and the third parties'
script time (warehouse table ``inp_interactions``, docs/performance.md "INP causes");
:mod:`stacklens.metrics.catalog` holds them all, in order."""

from __future__ import annotations

from stacklens.metrics.definition import LOG_HISTOGRAM, RAW_ROWS, SUM_COUNT, Metric, State
from stacklens.metrics.units import COUNT, MS

# The INP view and its exports read the hour and day states (`inp_periods`: counts, sums, 1 % log
# histograms) and the window's edge hours from the interactions; budgets, alert rules and their previews and
# Explore read the interactions, each value as the histograms keep it (macro inp_hist_value) with the same
# percentile function.
_VIEW_READERS = "INP view, exports"
_ROW_READERS = "budgets and alert rules, Explore"
_STATISTICS = ("p75", "p50", "p95", "avg")


def _part(key: str, label: str, short: str, column: str, description: str, stem: str) -> Metric:
    count = "third_party_hist" if column == "third_party_ms" else "attributed"
    prefix = column.removesuffix("_ms")
    return Metric(
        key,
        label,
        short,
        MS,
        _STATISTICS,
        "p75",
        description,
        stem,
        (
            State("inp_periods", (count, f"{prefix}_sum", f"{prefix}_hist"), LOG_HISTOGRAM, _VIEW_READERS),
            State("inp_interactions", (column,), RAW_ROWS, _ROW_READERS),
        ),
        budget=True,
        kind="interactions",
    )


INTERACTION_METRICS: tuple[Metric, ...] = (
    _part(
        "inp_input_delay_ms",
        "INP input delay",
        "Input delay",
        "input_delay",
        "Time from the user's input until its event handlers start (the main thread busy with other work), per "
        "reported interaction with attribution.",
        "inp_input_delay",
    ),
    _part(
        "inp_processing_ms",
        "INP processing time",
        "Processing",
        "processing",
        "Time the interaction's event handlers run, per reported interaction with attribution.",
        "inp_processing",
    ),
    _part(
        "inp_presentation_ms",
        "INP presentation delay",
        "Presentation",
        "presentation",
        "Time from the end of the event handlers until the next frame is painted, per reported interaction with "
        "attribution.",
        "inp_presentation",
    ),
    _part(
        "inp_third_party_ms",
        "INP third-party script time",
        "Third-party time",
        "third_party_ms",
        "Time third-party scripts (a host that is neither the page's nor one of the project's own) ran in the "
        "long animation frames of an interaction, per interaction with long-animation-frame data.",
        "inp_third_party",
    ),
    Metric(
        "inp_interactions",
        "Interactions (INP)",
        "Interactions",
        COUNT,
        ("count",),
        "count",
        "Interactions browsers reported with their INP (standalone INP spans), with or without attribution.",
        "inp_interactions",
        (
            State("inp_periods", ("interactions",), SUM_COUNT, _VIEW_READERS),
            State("inp_interactions", ("ts",), RAW_ROWS, "Explore"),
        ),
        fixed_statistic=True,
        kind="interactions",
    ),
)
