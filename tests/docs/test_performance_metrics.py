"""docs/performance.md's metric table is the metric catalog's: the page holds exactly the table the catalog
generates (key, label, unit, statistics, thresholds, states, column, how a value is written), so the two
cannot drift; its web-vital ratings table says the catalog's thresholds."""

from __future__ import annotations

import re
from pathlib import Path

from stacklens.metrics.catalog import web_vitals
from stacklens.metrics.reference import BEGIN, END, markdown_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "performance.md"


def test_the_metric_table_is_the_catalogs() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    documented = text[text.index(BEGIN) : text.index(END) + len(END)]
    assert documented == markdown_table(), (
        "docs/performance.md's metric table differs from the catalog: replace it with the output of "
        "`python -m stacklens.metrics.reference`"
    )


def _seconds_or_value(cell: str) -> float:
    """``≤ 2.5 s`` → 2500, ``≤ 200 ms`` → 200, ``≤ 0.1`` → 0.1 (the ratings table's way of writing them)."""
    number = float(re.search(r"[\d.]+", cell).group(0))
    return number * 1000 if cell.strip().endswith(" s") else number


def test_the_ratings_table_says_the_catalogs_thresholds() -> None:
    text = PAGE.read_text(encoding="utf-8")
    rows = re.findall(r"^\| (LCP|INP|CLS|FCP|TTFB) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", text, re.M)
    assert [r[0] for r in rows] == ["LCP", "INP", "CLS", "FCP", "TTFB"]
    vitals = {m.short_label: m for m in web_vitals().values()}
    for name, good, needs_improvement, _poor in rows:
        thresholds = vitals[name].thresholds
        assert thresholds is not None
        assert (_seconds_or_value(good), _seconds_or_value(needs_improvement)) == (
            thresholds.good,
            thresholds.poor,
        )
