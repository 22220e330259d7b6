"""What the trace page draws (docs/traces.md): each span's bar as a share of the trace's length in an SVG
of 1,000 units (attributes, not inline styles: the strict CSP), each service's colour, the time axis."""

from __future__ import annotations

from dataclasses import dataclass

from stacklens.metrics import units

# Ten colours told apart by colour-blind readers too (Tableau 10), in the order services appear; an eleventh
# service starts again with the first.
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#bab0ac",
)
WIDTH = 1000.0
MIN_BAR = 2.0  # a span of 0 ms still shows as a sliver
MAX_DEPTH_CLASS = 16  # the deepest indentation step the stylesheet has


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True)
class Bar:
    x: float
    width: float


def bar(start_ms: float, duration_ms: float, total_ms: float) -> Bar:
    """The span's bar in the 0–1000 SVG units of the row."""
    total = total_ms if total_ms > 0 else 1.0
    x = min(WIDTH - MIN_BAR, max(0.0, start_ms / total * WIDTH))
    width = max(MIN_BAR, min(WIDTH - x, duration_ms / total * WIDTH))
    return Bar(round(x, 2), round(width, 2))


def ticks(total_ms: float, count: int = 5) -> list[str]:
    """The time axis' labels at 0, ¼, ½, ¾ and the end of the trace."""
    return [units.format_in(units.MS, total_ms * i / (count - 1)) for i in range(count)]


def depth_class(depth: int) -> str:
    return f"d{min(depth, MAX_DEPTH_CLASS)}"
