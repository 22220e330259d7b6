"""The tables of the performance pages as exports: every column a table names is a key of its view's rows (on
seeded data), the CSV of 10,000 rows comes in chunks that read back to the same rows, an empty table still has
its header, spreadsheet formulas in text cells are defused, and bad detail parameters name their field."""

from __future__ import annotations

import csv
import io

import pytest

from stacklens.errors import InvalidInput, NotFound
from stacklens.performance.exports import tabular
from stacklens.performance.exports.tables import PAGES, Target, page_data, table, table_rows
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW, migrated, seed

ORG, PROJECT = 7, 70
WINDOW = ViewFilters.parse(since="2026-11-06T12:00:00Z", until=NOW.isoformat())
TARGETS = {
    "page_detail": Target(page="/checkout"),
    "endpoint_detail": Target(source="client", method="GET", path="/api/items/{id}"),
}


def test_every_column_is_a_key_of_the_rows(settings) -> None:
    client = migrated(settings)
    seed(client, ORG, PROJECT, loads=150, seed=21)
    for page, specs in PAGES.items():
        data = page_data(page, client, ORG, PROJECT, WINDOW, TARGETS.get(page, Target()))
        for spec in specs:
            rows = spec.rows(data)
            assert rows or spec.name == "blocking", (page, spec.name)
            for row in rows:
                # good_at_most / poor_above: the score row of the vitals has no thresholds
                missing = set(spec.columns) - set(row) - {"good_at_most", "poor_above"}
                assert not missing, (page, spec.name, missing)
    with pytest.raises(InvalidInput, match=r"^page: "):
        page_data("page_detail", client, ORG, PROJECT, WINDOW, Target())
    with pytest.raises(InvalidInput, match=r"^source: "):
        page_data("endpoint_detail", client, ORG, PROJECT, WINDOW, Target(source="x", method="GET", path="/"))
    with pytest.raises(InvalidInput, match=r"^sort: "):
        page_data("endpoints", client, ORG, PROJECT, WINDOW, Target(sort="nope"))
    with pytest.raises(NotFound):
        page_data("budgets", client, ORG, PROJECT, WINDOW, Target())
    with pytest.raises(InvalidInput, match=r"^table: pages has the tables pages"):
        table("pages", "nope")


def test_ten_thousand_rows_stream_in_chunks_and_read_back() -> None:
    spec = table("endpoints", "endpoints")
    rows = [
        {
            "source": "client",
            "method": "GET",
            "path": f"/api/items/{i}",
            "calls": i,
            "avg_ms": i / 3,
            "p95_ms": None if i % 7 == 0 else i * 1.5,
            "s2xx": i,
            "s4xx": 0,
            "s5xx": 1,
            "error_pct": 0.25,
        }
        for i in range(10_000)
    ]
    chunks = list(tabular.csv_chunks(tabular.frame(spec, {"rows": rows}), chunk_rows=1_000))
    assert len(chunks) == 11  # the header, then 10 pieces of 1,000 rows
    assert chunks[0] == (",".join(spec.columns) + "\n").encode()
    parsed = list(csv.DictReader(io.StringIO(b"".join(chunks).decode())))
    assert len(parsed) == 10_000
    for got, want in zip(parsed, table_rows(spec, {"rows": rows}), strict=True):
        assert got["path"] == want["path"] and int(got["calls"]) == want["calls"]
        assert float(got["avg_ms"]) == want["avg_ms"]
        assert (got["p95_ms"] == "") if want["p95_ms"] is None else float(got["p95_ms"]) == want["p95_ms"]


def test_empty_tables_keep_their_header_and_formulas_are_defused() -> None:
    spec = table("recommendations", "recommendations")
    assert (
        b"".join(tabular.csv_chunks(tabular.frame(spec, {"rows": []})))
        == (",".join(spec.columns) + "\n").encode()
    )
    pages = table("pages", "pages")
    rows = [
        {"page": '=HYPERLINK("http://x")', "views": 3},
        {"page": "-1+2", "views": 4},
        {"page": "/ok", "views": 5},
    ]
    text = b"".join(tabular.csv_chunks(tabular.frame(pages, {"rows": rows}))).decode()
    cells = [r["page"] for r in csv.DictReader(io.StringIO(text))]
    assert cells == ['\'=HYPERLINK("http://x")', "'-1+2", "/ok"]
    # lists and maps are JSON text in a cell, as the API's CSV has them
    recs = [{"severity": "High", "rule": "r", "evidence": {"p95_ms": 1.5}, "pages": ["/", "/a"]}]
    parsed = next(
        csv.DictReader(
            io.StringIO(b"".join(tabular.csv_chunks(tabular.frame(spec, {"rows": recs}))).decode())
        )
    )
    assert parsed["evidence"] == '{"p95_ms": 1.5}' and parsed["pages"] == '["/", "/a"]'
