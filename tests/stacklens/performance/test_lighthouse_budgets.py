"""Budgets from and to Lighthouse CI's budget.json: what maps is imported, what does not is reported."""

from __future__ import annotations

import json

import pytest

from stacklens.control.budgets import BudgetRow
from stacklens.performance.budget_rules import BudgetError
from stacklens.performance.lighthouse_budgets import export, parse

BUDGET_JSON = [
    {
        "path": "/checkout$",
        "timings": [
            {"metric": "largest-contentful-paint", "budget": 2500},
            {"metric": "interactive", "budget": 4000},
        ],
        "resourceSizes": [{"resourceType": "script", "budget": 300}],
        "resourceCounts": [{"resourceType": "third-party", "budget": 10}],
    },
    {"path": "/*", "timings": [{"metric": "cumulative-layout-shift", "budget": 0.1}]},
]


def _row(metric: str, scope: str, value: float, statistic: str = "p75") -> BudgetRow:
    return BudgetRow(1, 1, 1, "shop", metric, scope, value, "", "", statistic, 7, 20, "2026-11-20")


def test_what_maps_is_imported_and_the_rest_reported() -> None:
    imported = parse(json.dumps(BUDGET_JSON))
    assert [(b.metric, b.scope, b.value) for b in imported.budgets] == [
        ("lcp_ms", "/checkout", 2500.0),
        ("js_bytes", "/checkout", 300 * 1024.0),
        ("cls", "*", 0.1),
    ]
    assert imported.not_mapped == [
        "budget.json[0].resourceCounts[0]: resource count third-party (no count budgets)",
        "budget.json[0].timings[1]: timing interactive (no field measurement of it)",
    ]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("{", "budget.json"),
        ('{"path": "/"}', "budget.json"),
        ('[{"path": 7}]', "budget.json[0].path"),
        (
            '[{"timings": [{"metric": "first-contentful-paint", "budget": "fast"}]}]',
            "budget.json[0].timings[0].budget",
        ),
        (
            '[{"timings": [{"metric": "first-contentful-paint", "budget": 1800}, '
            '{"metric": "first-contentful-paint", "budget": 1900}]}]',
            "budget.json[0].timings[1]",
        ),
    ],
)
def test_a_bad_file_names_its_first_bad_field(text: str, field: str) -> None:
    with pytest.raises(BudgetError) as refused:
        parse(text)
    assert refused.value.field == field


def test_export_groups_by_path_and_skips_what_lighthouse_cannot_say() -> None:
    entries, skipped = export(
        [
            _row("lcp_ms", "/checkout", 2500),
            _row("js_bytes", "/checkout", 307200),
            _row("cls", "*", 0.1),
            _row("lcp_ms", "/p/*", 3000, statistic="p95"),
        ]
    )
    assert entries == [
        {
            "path": "/checkout$",
            "timings": [{"metric": "largest-contentful-paint", "budget": 2500}],
            "resourceSizes": [{"resourceType": "script", "budget": 300.0}],
        },
        {"path": "/*", "timings": [{"metric": "cumulative-layout-shift", "budget": 0.1}]},
    ]
    assert skipped == ["lcp_ms p95 on /p/* (no Lighthouse budget for it)"]
