"""The recommendations' own rules on rows as the resource list gives them: which resources old releases alone
served, one row per subject, evidence and messages in human units — and the recommendations of a seeded
warehouse, one per subject."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from stacklens.metrics.formatting import format_value
from stacklens.performance.recommendations import (
    _endpoint_rules,
    _resource_rules,
    evidence_text,
    one_per_subject,
    recommendations,
    served,
)
from stacklens.view_filters import ViewFilters
from tests.stacklens.performance.perf_seed import NOW
from tests.stacklens.performance.read_worlds import ORG, PROJECT

END = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _resource(name: str, releases: dict[str, int], last_days_ago: int, **extra: object) -> Any:
    """A resource list row: first seen per release ``n`` days before END, last seen ``last_days_ago``."""
    row = {
        "resource": name,
        "resource_type": "Images" if name.endswith((".png", ".webp")) else "JavaScript",
        "host": "shop.test",
        "third_party": False,
        "requests": 100,
        "loads": 100,
        "total_bytes": 100 * 1_600_000,
        "avg_bytes": 1_600_000.0,
        "avg_decoded_bytes": 1_600_000.0,
        "avg_ms": 420.0,
        "render_blocking": "unknown",
        "impact": "",
        "impact_reason": "",
        "blocking_loads": 0,
        "fcp_share": None,
        "pages": ["/"],
        "release_first": {r: END - timedelta(days=d) for r, d in releases.items()},
        "last_seen": END - timedelta(days=last_days_ago),
    }
    row.update(extra)
    return row


def test_resources_only_old_releases_served_are_told_apart() -> None:
    rows = [
        _resource("https://shop.test/static/app.1.3.0.js", {"shop@1.3.0": 20}, 6),
        _resource("https://shop.test/static/app.1.4.0.js", {"shop@1.4.0": 5}, 0),
        _resource("https://shop.test/img/p1-0.png", {"shop@1.3.0": 20, "shop@1.4.0": 5}, 0),
        # not requested by 1.4.0 in the window, but yesterday: still served (a rarely loaded file)
        _resource("https://shop.test/img/rare.webp", {"shop@1.3.0": 20}, 1),
    ]
    assert served(rows) == {
        "https://shop.test/static/app.1.4.0.js",
        "https://shop.test/img/p1-0.png",
        "https://shop.test/img/rare.webp",
    }
    # Filtered to one release (or no releases at all): that release is the newest, everything is served.
    only = [_resource("https://shop.test/static/app.1.3.0.js", {"shop@1.3.0": 20}, 6)]
    assert served(only) == {"https://shop.test/static/app.1.3.0.js"}
    assert served([]) == set()


def test_one_row_per_resource_in_human_units() -> None:
    png = _resource("https://shop.test/img/p1-0.png", {"": 20}, 0)
    script = _resource(
        "https://shop.test/static/vendor.js",
        {"": 20},
        0,
        avg_bytes=300_000.0,
        avg_decoded_bytes=300_000.0,
        render_blocking="blocking",
        impact="High",
        impact_reason="420 ms ≥ 200 ms",
        blocking_loads=80,
        fcp_share=0.35,
    )
    rules = _resource_rules([png, script])
    assert sorted(r["rule"] for r in rules if r["subject"] == png["resource"]) == ["oversized_image"]
    rows = one_per_subject(rules)
    assert [r["subject"] for r in rows] == [png["resource"], script["resource"]]
    vendor = rows[1]
    assert (
        vendor["rules"] == ["render_blocking_script", "uncompressed_asset"] and vendor["severity"] == "High"
    )
    assert "293.0 KiB" in vendor["message"] and "420 ms" in vendor["estimated_saving"]
    assert "1.5 MiB" in rows[0]["message"]
    text = dict(evidence_text(vendor["evidence"]))
    assert text["average size"] == "293.0 KiB" and text["average time"] == "420.0 ms"
    assert text["share of FCP"] == "35.0 %" and text["requests"] == "100"
    for row in rows:
        shown = " ".join(
            [row["message"], row["estimated_saving"], *dict(evidence_text(row["evidence"])).values()]
        )
        assert not re.search(r"\de[+-]\d", shown), shown


def test_recommendations_one_per_subject(reads_world) -> None:
    client, _ = reads_world
    recs = recommendations(client, ORG, PROJECT, ViewFilters.parse(range="14d", now=NOW))
    subjects = [r["subject"] for r in recs]
    assert len(subjects) == len(set(subjects))  # every rule of a subject on its one row
    assert all(r["rules"][0] == r["rule"] and len(set(r["rules"])) == len(r["rules"]) for r in recs)
    rules = {rule for r in recs for rule in r["rules"]}
    assert {
        "render_blocking_script",
        "oversized_image",
        "large_api_payload",
        "failing_endpoint",
        "slow_endpoint",
    } <= rules
    hero = [r for r in recs if r["subject"] == "https://shop.test/img/hero.png"]
    assert (
        len(hero) == 1
        and hero[0]["rules"] == ["oversized_image"]  # a big PNG: told once, its format advice included
        and hero[0]["pages"] == ["/", "/checkout", "/products/{id}"]
        and hero[0]["estimated_saving"]
    )
    assert "KiB" in hero[0]["message"] and not re.search(r"\de[+-]\d", hero[0]["message"])
    assert not any(r["old_release"] for r in recs)  # one URL set in both releases: nothing is old


def _endpoint(calls: int, s5xx: int, **extra: object) -> Any:
    row = {
        "source": "server",
        "method": "POST",
        "path": "/api/checkout",
        "calls": calls,
        "avg_ms": 120.0,
        "p95_ms": 300.0,
        "s2xx": calls - s5xx,
        "s3xx": 0,
        "s4xx": 0,
        "s5xx": s5xx,
        "error_pct": 100.0 * s5xx / calls,
        "avg_bytes": None,
        "max_per_load": 0,
        "loads": 0,
        "pages": ["/checkout"],
    }
    row.update(extra)
    return row


def test_a_figure_and_its_evidence_print_the_same_digits() -> None:
    # 9 of 144 calls is 6.25 %: rounding the evidence to 6.2 first and the message from 6.25 read "fails 6.3
    # %" beside "errors: 6.2 %". Both are now written once, by the catalog, from the same number.
    (rec,) = one_per_subject(_endpoint_rules([_endpoint(144, 9)]))
    said = re.search(r"fails ([\d.]+ %) of 144 calls", rec["message"])
    assert said, rec["message"]
    assert dict(evidence_text(rec["evidence"]))["errors"] == said.group(1) == format_value("error_pct", 6.25)
    # A third party's share: the message and the evidence carry the same digits too.
    rows = [
        _resource(
            "https://cdn.other.test/big.js", {"shop@1.4.0": 5}, 0, third_party=True, host="cdn.other.test"
        ),
        _resource("https://shop.test/app.js", {"shop@1.4.0": 5}, 0, total_bytes=100 * 1_600_000 * 3 // 1.1),
    ]
    (third,) = [r for r in one_per_subject(_resource_rules(rows)) if r["rule"] == "third_party_bytes"]
    share = dict(evidence_text(third["evidence"]))["share of the bytes"]
    assert f"carries {share} of the resource bytes" in third["message"], (share, third["message"])
