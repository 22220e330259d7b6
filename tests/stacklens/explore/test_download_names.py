"""A download is named after its question (or the widget's title) and its window, as a safe slug."""

from __future__ import annotations

from stacklens.explore.download_names import download_name, slug
from stacklens.explore.query_parser import parse_query


def test_named_after_the_question_and_the_window() -> None:
    query = parse_query(
        {
            "dataset": "pageloads",
            "range": "30d",
            "group_by": ["release"],
            "aggregates": [{"fn": "p75", "metric": "lcp_ms"}],
        }
    )
    assert download_name(query, "csv") == "lcp-p75-by-release-30d.csv"
    assert download_name(query, "parquet", "LCP p75 by release") == "lcp-p75-by-release-30d.parquet"
    window = parse_query(
        {"dataset": "pageloads", "since": "2026-11-01T00:00:00Z", "until": "2026-11-28T00:00:00Z"}
    )
    assert download_name(window, "json") == "count-2026-11-01-to-2026-11-28.json"


def test_the_slug_holds_no_path_quote_or_non_ascii_character() -> None:
    assert slug('../../etc/passwd "x"\r\nSet-Cookie: a') == "etc-passwd-x-set-cookie-a"
    assert slug("Ladezeit größer — Überblick") == "ladezeit-groer-uberblick"
    assert slug("////") == ""
    query = parse_query({"dataset": "pageloads", "range": "7d"})
    assert download_name(query, "csv", "////") == "count-7d.csv"
    assert len(slug("x" * 500)) == 80
