"""The units a metric's values are in, and how a number in each is written.

Bytes use the **binary** prefix system (1 KiB = 1,024 B, 1 MiB = 1,048,576 B), as Chrome DevTools and
Lighthouse write transfer sizes and as Lighthouse CI's ``budget.json`` counts them (docs/decisions.md,
"Metric catalog"). A size is never written "KB": that name is 1,000 bytes in SI, and "250.0 KB" for 256,000
bytes was a 2.4 % error on every byte budget.

Every number is written in fixed notation with thousands separators (never ``7.3e+05``): the same value gives
the same string on every page, in the PDF, the CLI and the alert messages.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Context, Decimal

# Enough digits for any finite float in fixed notation (the largest has 309 before the point).
_DIGITS = Context(prec=400)
MISSING = "–"  # a value that is not there (no samples): never 0
BINARY_PREFIXES = (("KiB", 1024), ("MiB", 1024**2), ("GiB", 1024**3))


@dataclass(frozen=True)
class Unit:
    key: str  # "ms", "bytes", "score", "percent", "ratio", "count"
    symbol: str  # written after a raw number ("ms", "bytes", "%"); "" when the value has none
    decimals: int  # digits after the point, unless the metric says otherwise
    column_suffix: (
        str  # the end of a CSV column or axis name in this unit ("ms", "bytes", "pct"); "" for none
    )
    description: str


MS = Unit("ms", "ms", 1, "ms", "milliseconds")
BYTES = Unit(
    "bytes",
    "bytes",
    1,
    "bytes",
    "bytes; written with binary prefixes (1 KiB = 1,024 B, 1 MiB = 1,024 KiB), stored and exported as bytes",
)
SCORE = Unit("score", "", 2, "", "a unitless score")
PERCENT = Unit("percent", "%", 1, "pct", "percent (0-100)")
RATIO = Unit("ratio", "", 2, "", "a ratio (1.0 = equal)")
COUNT = Unit("count", "", 0, "", "a whole number of things")
RATE_PER_1K = Unit("rate_per_1k", "per 1,000", 1, "per_1k", "how many per 1,000 page loads")
UNITS: dict[str, Unit] = {u.key: u for u in (MS, BYTES, SCORE, PERCENT, RATIO, COUNT, RATE_PER_1K)}
# A unit by the symbol written after a raw number ("ms", "bytes", "%"; "" is a unitless score such as CLS).
BY_SYMBOL: dict[str, Unit] = {u.symbol: u for u in (MS, BYTES, PERCENT, SCORE)}


def _finite(value: float | int | None) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _rounded(value: float | int, decimals: int) -> Decimal:
    """``value`` rounded half up from its shortest decimal form: 2004.85 → 2004.9, as a reader rounds it
    (binary rounding of the float 2004.8499999… would give 2004.8)."""
    exact = Decimal(repr(float(value))).quantize(Decimal(1).scaleb(-decimals), ROUND_HALF_UP, _DIGITS)
    return abs(exact) if exact == 0 else exact  # "-0.0" reads as a negative value that is not there


def number(value: float | int, decimals: int) -> str:
    """``value`` in fixed notation with thousands separators and ``decimals`` digits after the point."""
    return f"{_rounded(value, decimals):,.{decimals}f}"


def plain_number(value: float | int) -> str:
    """A number as a form field or a command line takes it back: no separators, no exponent, no trailing
    zeros (``1000000``, ``0.1``, ``2500.5``); ``:g`` would write 1,000,000 bytes as ``1e+06``."""
    text = format(Decimal(repr(float(value))).normalize(), "f")
    return "0" if text in ("-0", "0") else text


def binary_size(value: float, decimals: int = 1) -> str:
    """Bytes with a binary prefix: ``512 B``, ``250.0 KiB``, ``1.5 MiB``, ``2.0 GiB``. The prefix is chosen
    after rounding, so 1,048,575 bytes is ``1.0 MiB``, not ``1,024.0 KiB``."""
    if abs(_rounded(value, 0)) < 1024:
        return f"{number(value, 0)} B"
    for name, size in BINARY_PREFIXES:
        scaled = value / size
        if name == BINARY_PREFIXES[-1][0] or abs(_rounded(scaled, decimals)) < 1024:
            return f"{number(scaled, decimals)} {name}"
    raise AssertionError("unreachable: the last prefix always returns")


def format_in(unit: Unit, value: float | int | None, decimals: int | None = None) -> str:
    """``value`` written in ``unit`` (``–`` when missing or not finite)."""
    number_ = _finite(value)
    if number_ is None:
        return MISSING
    digits = unit.decimals if decimals is None else decimals
    if unit.key == BYTES.key:
        return binary_size(number_, digits)
    if unit.key == PERCENT.key:
        return f"{number(number_, digits)} %"
    if unit.symbol:
        return f"{number(number_, digits)} {unit.symbol}"
    return number(number_, digits)


def axis_tick(unit: Unit, value: float) -> str:
    """A chart tick in ``unit``, as short as a tick needs: ``100 ms``, ``1 s``, ``2.5 s`` for times
    (seconds from 1,000 ms on), ``512 B`` / ``1.5 MiB`` for sizes, the bare number otherwise. Ticks sit on
    round values, so no digits are lost; table cells and exports keep :func:`format_in`."""
    if unit.key == MS.key:
        if abs(value) >= 1000:
            return f"{plain_number(round(value / 1000, 3))} s"
        return f"{plain_number(round(value, 3))} ms"
    if unit.key == BYTES.key:
        return binary_size(value, 1)
    return plain_number(round(value, 6))


def round_ticks(high: float, most: int = 6) -> list[float]:
    """Ticks of a linear axis from 0 to at least ``high`` on round values — 1, 2 or 5 times a power of ten,
    at most ``most`` of them beside 0 — so a size axis in KiB reads 0 / 200 / 400 / 600 KiB, never
    273 / 545 / 818 (a count of bytes scaled by 1,024 and cut in thirds). ``[0]`` for nothing to show."""
    if not math.isfinite(high) or high <= 0:
        return [0.0]
    power = 10.0 ** math.floor(math.log10(high / most))
    step = next(m * power for m in (1, 2, 5, 10) if high / (m * power) <= most)
    count = math.ceil(high / step - 1e-9)
    return [round(i * step, 9) for i in range(count + 1)]


def size_ticks(high_kib: float) -> tuple[list[float], list[str]]:
    """A size axis plotted in KiB, from 0 to at least ``high_kib``: its tick values (KiB) and their texts, on
    round values of one binary unit for the whole axis — ``0, 200 KiB, 400 KiB`` or ``0, 1 MiB, 2 MiB``."""
    scale, name = (1024.0, "MiB") if high_kib >= 1024 else (1.0, "KiB")
    ticks = round_ticks(high_kib / scale)
    return [v * scale for v in ticks], [f"{plain_number(v)} {name}" if v else "0" for v in ticks]


def log_ticks(low: float, high: float) -> list[float]:
    """Round tick values for a log axis over [low, high]: 1, 2 and 5 times powers of ten (1, 2, 3, 5, then
    every digit, when the range is too narrow for three of those), so ticks read ``100 ms, 200 ms, 500 ms,
    1 s`` instead of plotly's default ``100 2 3 4 5`` minor labels."""
    if low <= 0 or high <= low:
        return []
    lowest, highest = math.floor(math.log10(low)), math.ceil(math.log10(high))
    for steps in ((1, 2, 5), (1, 2, 3, 5), tuple(range(1, 10))):
        ticks = [m * 10.0**k for k in range(lowest, highest + 1) for m in steps if low <= m * 10.0**k <= high]
        if len(ticks) >= 3:
            return ticks
    return ticks
