"""Recommendations: deterministic rules over the field data of the filtered window, **one row per subject** (a
resource, an endpoint or a third-party host) — never one per page view, per page or per release: the pages a
subject affects are listed on its one row, and when several rules apply to one subject they are that row's
``rules`` (the most severe first, its ``rule``), their messages and savings side by side. Each row carries its
evidence (raw numbers, in the units their keys say) and an estimated saving; every number in a message is
written as the metric catalog writes its unit (``1.6 MiB``, ``420 ms``).

Resources no longer served are left out unless asked for (``include_old``): a resource that no page load of
the window's newest release requested (the release first seen last) and that was not requested in the window's
last two days belongs to an old release — the demo's ``app.1.3.0.js`` after 1.4.0 shipped — and fixing it
fixes nothing. Such rows carry ``old_release: true`` when included.

Rules and thresholds (docs/performance.md repeats them):
  render_blocking_script / render_blocking_css  a render-blocking JS / CSS file of impact High or Medium
  uncompressed_asset   JS / CSS / font over 10 KiB served without compression (decoded ≈ encoded size), or a
  BMP /
                       TIFF image, or a PNG over 100 KiB (an oversized PNG is told once, as oversized_image)
  oversized_image      an image averaging over 200 KiB (High over 1 MiB)
  large_api_payload    a browser API call averaging over 500 KiB of response
  parallel_calls       one page load calling the same endpoint 5 times or more (N+1)
  slow_endpoint        endpoint p95 over 1 s (High over 3 s)
  failing_endpoint     endpoint error rate over 5 % over at least 20 calls (High over 20 %)
  third_party_bytes    a third-party host carrying over 20 % of the resource bytes
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import NotRequired

from clickhouse_connect.driver.client import Client
from typing_extensions import TypedDict

from stacklens.metrics import units
from stacklens.metrics.catalog import CATALOG
from stacklens.metrics.formatting import format_value
from stacklens.performance.endpoint_reads import SOURCE_LABELS, EndpointRow, endpoints
from stacklens.performance.resource_reads import ResourceListRow, ResourceRow, resource_list
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.side_by_side import side_by_side

KB = 1024  # one KiB: sizes are written with binary prefixes (stacklens.metrics.units)
SEVERITY_ORDER = {"High": 0, "Medium": 1, "Low": 2}
GZIP_SAVING = 0.7  # text assets shrink about 70 % with gzip/brotli
IMAGE_TARGET = 100 * KB  # a web image at display size in WebP/AVIF rarely needs more
# A resource requested in the window's last two days is still served, whatever its release: a day's requests
# are one period of the states (read with single days), and yesterday's period starts up to two days before
# the end.
RECENT = timedelta(days=2)

# The numbers behind a recommendation, in the units their keys say (EVIDENCE), and where an endpoint was
# measured.
Evidence = dict[str, float | str | None]


class Finding(TypedDict):
    """What one rule finds about one subject (a resource, an endpoint or a third-party host)."""

    rule: str
    severity: str
    subject: str
    pages: list[str]
    message: str
    estimated_saving: str
    evidence: Evidence


class Recommendation(Finding):
    """The one row of a subject: its most severe finding's rule and severity, ``rules`` naming every rule that
    applies (that one first), their messages and savings joined and their evidence merged; ``old_release``
    when the subject is a resource only old releases served (set by :func:`recommendations`)."""

    rules: list[str]
    old_release: NotRequired[bool]


@dataclass
class _HostBytes:
    """A third-party host's share of the resources: its bytes, the pages loading it and its resources."""

    bytes: int = 0
    pages: set[str] = field(default_factory=set)
    resources: int = 0


def size(value: float) -> str:
    """Bytes as the catalog writes them: ``1.6 MiB``, ``420.0 KiB``."""
    return units.format_in(units.BYTES, value)


def ms(value: float) -> str:
    """Milliseconds, whole, as the catalog writes them: ``420 ms``, ``1,240 ms``."""
    return units.format_in(units.MS, value, 0)


def _rec(
    rule: str,
    severity: str,
    subject: str,
    pages: list[str],
    message: str,
    saving: str,
    evidence: Evidence,
) -> Finding:
    return {
        "rule": rule,
        "severity": severity,
        "subject": subject,
        "pages": pages,
        "message": message,
        "estimated_saving": saving,
        "evidence": evidence,
    }


def served(rows: Sequence[ResourceListRow]) -> set[str]:
    """The resources (URLs) of ``rows`` (:func:`~stacklens.performance.resource_reads.resource_list`) still
    served: one a load of the newest release requested — the release first seen last in the window; releases
    first seen on the same day are all newest — or one requested within RECENT of the window's last
    request. Without release data every resource is of the one release ``''``, so all are served."""
    first: dict[str, datetime] = {}
    for row in rows:
        for release, at in row["release_first"].items():
            first[release] = min(at, first.get(release, at))
    if not first:
        return {r["resource"] for r in rows}
    newest_at = max(first.values())
    newest = {release for release, at in first.items() if at == newest_at}
    latest = max(r["last_seen"] for r in rows)
    return {
        r["resource"] for r in rows if newest & set(r["release_first"]) or r["last_seen"] >= latest - RECENT
    }


def _resource_rules(rows: Sequence[ResourceRow]) -> list[Finding]:
    out = []
    total = sum(r["total_bytes"] for r in rows)
    hosts: dict[str, _HostBytes] = {}
    for r in rows:
        kind, avg, name = r["resource_type"], r["avg_bytes"], r["resource"]
        base: Evidence = {
            "requests": r["requests"],
            "loads": r["loads"],
            "avg_bytes": round(avg),
            "avg_ms": r["avg_ms"],  # unrounded: written once, by its unit, wherever it is shown
        }
        if (
            r["render_blocking"] == "blocking"
            and kind in ("JavaScript", "CSS")
            and r["impact"] in ("High", "Medium")
        ):
            rule = "render_blocking_script" if kind == "JavaScript" else "render_blocking_css"
            what = "script" if kind == "JavaScript" else "stylesheet"
            out.append(
                _rec(
                    rule,
                    r["impact"],
                    name,
                    r["pages"],
                    f"Render-blocking {what} {name} ({r['impact_reason']}): defer, async or inline the critical part",
                    f"up to {ms(r['avg_ms'])} of first paint on {r['blocking_loads']:,} page loads",
                    {**base, "blocking_loads": r["blocking_loads"], "fcp_share": r["fcp_share"]},
                )
            )
        lower = name.lower()
        text_asset = kind in ("JavaScript", "CSS") or (kind == "Fonts" and lower.endswith((".ttf", ".otf")))
        oversized = kind == "Images" and avg > 200 * KB
        uncompressed = (
            (text_asset and avg > 10 * KB and r["avg_decoded_bytes"] <= avg * 1.05)
            or lower.endswith((".bmp", ".tif", ".tiff"))
            or (lower.endswith(".png") and avg > 100 * KB)
        )
        # An oversized image is told to be resized and served as WebP/AVIF: that is its format advice too.
        if uncompressed and not oversized:
            saving = avg * GZIP_SAVING if text_asset else max(avg - IMAGE_TARGET, avg * 0.5)
            out.append(
                _rec(
                    "uncompressed_asset",
                    "Medium",
                    name,
                    r["pages"],
                    f"{name} is served uncompressed or in a format that compresses poorly ({size(avg)})",
                    f"about {size(saving)} per request, {size(saving * r['requests'])} in the window",
                    {**base, "avg_decoded_bytes": round(r["avg_decoded_bytes"])},
                )
            )
        if oversized:
            png = " (PNG, which compresses poorly)" if lower.endswith(".png") else ""
            out.append(
                _rec(
                    "oversized_image",
                    "High" if avg > KB * KB else "Medium",
                    name,
                    r["pages"],
                    f"Image {name} averages {size(avg)}{png}: resize it to its display size and serve WebP or AVIF",
                    f"about {size(avg - IMAGE_TARGET)} per request, {size((avg - IMAGE_TARGET) * r['requests'])} in the window",
                    base,
                )
            )
        if r["third_party"]:
            entry = hosts.setdefault(r["host"], _HostBytes())
            entry.bytes += r["total_bytes"]
            entry.pages.update(r["pages"])
            entry.resources += 1
    for host, entry in sorted(hosts.items()):
        share = entry.bytes / total if total else 0.0
        if share > 0.2:
            out.append(
                _rec(
                    "third_party_bytes",
                    "High" if share > 0.5 else "Medium",
                    host,
                    sorted(entry.pages),
                    f"{host} (third party) carries {units.format_in(units.PERCENT, 100 * share)} of the resource bytes",
                    f"{size(entry.bytes)} in the window if removed or self-hosted and trimmed",
                    {
                        "share_pct": 100 * share,  # written as the message writes it
                        "bytes": entry.bytes,
                        "resources": entry.resources,
                    },
                )
            )
    return out


def _endpoint_rules(rows: Sequence[EndpointRow]) -> list[Finding]:
    out = []
    for e in rows:
        name = f"{e['method']} {e['path']} ({e['source']})"
        where = SOURCE_LABELS[e["source"]]
        avg_bytes, p95 = e["avg_bytes"] or 0.0, e["p95_ms"] or 0.0
        base: Evidence = {
            "calls": e["calls"],
            "source": e["source"],
            "p95_ms": e["p95_ms"],
            # Unrounded: the page writes it as the catalog writes the error rate, as the message does
            # (rounding here first made "fails 6.3 %" sit beside "errors: 6.2 %" for 9 of 144 calls).
            "error_pct": e["error_pct"],
        }
        if e["source"] == "client" and avg_bytes > 500 * KB:
            out.append(
                _rec(
                    "large_api_payload",
                    "Medium",
                    name,
                    e["pages"],
                    f"{name} answers {size(avg_bytes)} on average: paginate or select fewer fields",
                    f"about {size(avg_bytes - 100 * KB)} per call",
                    {**base, "avg_bytes": round(avg_bytes)},
                )
            )
        if e["source"] == "client" and e["max_per_load"] >= 5:
            per_load = e["calls"] / e["loads"] if e["loads"] else 0.0
            out.append(
                _rec(
                    "parallel_calls",
                    "High" if e["max_per_load"] >= 10 else "Medium",
                    name,
                    e["pages"],
                    f"{name} is called up to {e['max_per_load']} times in one page load (N+1): batch the calls",
                    f"{max(per_load - 1, 0):.1f} calls per page load, about {ms((e['avg_ms'] or 0) * max(per_load - 1, 0))} of requests",
                    {**base, "max_per_load": e["max_per_load"], "calls_per_load": round(per_load, 2)},
                )
            )
        if p95 > 1000:
            out.append(
                _rec(
                    "slow_endpoint",
                    "High" if p95 > 3000 else "Medium",
                    name,
                    e["pages"],
                    f"{name} is slow: p95 {ms(p95)} over {e['calls']:,} calls, measured in the {where}",
                    f"about {ms(p95 - 1000)} on the slowest 5 % of calls at a 1 s target",
                    base,
                )
            )
        if e["calls"] >= 20 and e["error_pct"] > 5:
            out.append(
                _rec(
                    "failing_endpoint",
                    "High" if e["error_pct"] > 20 else "Medium",
                    name,
                    e["pages"],
                    f"{name} fails {format_value('error_pct', e['error_pct'])} of {e['calls']:,} calls",
                    f"{e['s4xx'] + e['s5xx']:,} failed calls in the window",
                    {**base, "s4xx": e["s4xx"], "s5xx": e["s5xx"]},
                )
            )
    return out


def one_per_subject(recs: list[Finding]) -> list[Recommendation]:
    """The recommendations with one row per subject: the most severe rule's row, ``rules`` naming every
    rule that applies, their messages and savings joined (each distinct once) and their evidence merged."""
    by_subject: dict[str, list[Finding]] = {}
    for rec in recs:
        by_subject.setdefault(rec["subject"], []).append(rec)
    out: list[Recommendation] = []
    for group in by_subject.values():
        group.sort(key=lambda r: (SEVERITY_ORDER[r["severity"]], r["rule"]))
        first = group[0]
        evidence: Evidence = {}
        for rec in reversed(group):  # the most severe rule's evidence wins a shared key
            evidence.update(rec["evidence"])
        out.append(
            {
                "rule": first["rule"],
                "severity": first["severity"],
                "subject": first["subject"],
                "pages": first["pages"],
                "message": ". ".join(dict.fromkeys(r["message"] for r in group)),
                "estimated_saving": "; ".join(dict.fromkeys(r["estimated_saving"] for r in group)),
                "evidence": evidence,
                "rules": [r["rule"] for r in group],
            }
        )
    return out


# How the page writes an evidence value: its label and the unit of the number (``None``: as it is).
EVIDENCE: dict[str, tuple[str, units.Unit | None]] = {
    "requests": ("requests", units.COUNT),
    "loads": ("page loads", units.COUNT),
    "calls": ("calls", units.COUNT),
    "avg_bytes": ("average size", units.BYTES),
    "avg_decoded_bytes": ("decoded size", units.BYTES),
    "bytes": ("bytes", units.BYTES),
    "avg_ms": ("average time", units.MS),
    "p95_ms": ("p95", units.MS),
    "blocking_loads": ("render-blocking loads", units.COUNT),
    "fcp_share": ("share of FCP", units.PERCENT),
    "share_pct": ("share of the bytes", units.PERCENT),
    "error_pct": ("errors", units.PERCENT),
    "resources": ("resources", units.COUNT),
    "max_per_load": ("most calls in one page load", units.COUNT),
    "calls_per_load": ("calls per page load", units.RATIO),
    "s4xx": ("4xx answers", units.COUNT),
    "s5xx": ("5xx answers", units.COUNT),
    "source": ("measured in", None),
}


def evidence_text(evidence: Mapping[str, float | str | None]) -> list[tuple[str, str]]:
    """A row's evidence as a reader reads it: ``[("average size", "1.6 MiB"), ("average time", "420.0 ms")]``,
    each number in its unit as the catalog writes it (never ``1.6e+06``)."""
    out = []
    for key, value in evidence.items():
        label, unit = EVIDENCE.get(key, (key.replace("_", " "), None))
        if key == "fcp_share" and isinstance(value, int | float):
            value = 100 * value  # a share (0-1) read as percent
        if key == "source":
            text = SOURCE_LABELS.get(str(value), str(value))
        elif key in CATALOG and not isinstance(value, str):
            text = format_value(key, value)  # a catalog metric: written as every face writes it
        elif unit is not None and not isinstance(value, str):
            text = units.format_in(unit, value)
        else:
            text = units.MISSING if value is None else str(value)
        out.append((label, text))
    return out


def recommendations(
    client: Client, org_id: int, project_id: int, filters: ViewFilters, include_old: bool = False
) -> list[Recommendation]:
    """Every recommendation for the filters, one per subject, the most severe first, then by rule and subject;
    without ``include_old`` none about a resource no longer served (:func:`served`). Every row says whether
    its subject is such a resource (``old_release``). The resource list and the endpoint list are read at
    once (two clients of the warehouse)."""
    resource_rows, endpoint_rows = side_by_side(
        client,
        lambda c: resource_list(c, org_id, project_id, filters),
        lambda c: endpoints(c, org_id, project_id, filters),
    )
    current = served(resource_rows)
    old = {r["resource"] for r in resource_rows} - current
    recs = one_per_subject(_resource_rules(resource_rows) + _endpoint_rules(endpoint_rows))
    for rec in recs:
        rec["old_release"] = rec["subject"] in old
    if not include_old:
        recs = [r for r in recs if not r["old_release"]]
    return sorted(recs, key=lambda r: (SEVERITY_ORDER[r["severity"]], r["rule"], r["subject"]))
