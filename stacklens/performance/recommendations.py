"""Recommendations: deterministic rules over the field data of the filtered window, one per subject (a resource,
an endpoint or a third-party host) and rule — never one per page view or per page: the pages a subject affects are
listed on its one row. Each carries its evidence and an estimated saving.

Rules and thresholds (docs/performance.md repeats them):
  render_blocking_script / render_blocking_css  a render-blocking JS / CSS file of impact High or Medium
  uncompressed_asset   JS / CSS / font over 10 KiB served without compression (decoded ≈ encoded size), or a BMP /
                       TIFF image, or a PNG over 100 KiB
  oversized_image      an image averaging over 200 KiB (High over 1 MiB)
  large_api_payload    a browser API call averaging over 500 KiB of response
  parallel_calls       one page load calling the same endpoint 5 times or more (N+1)
  slow_endpoint        endpoint p95 over 1 s (High over 3 s)
  failing_endpoint     endpoint error rate over 5 % over at least 20 calls (High over 20 %)
  third_party_bytes    a third-party host carrying over 20 % of the resource bytes
"""

from __future__ import annotations

from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.performance.filters import PerfFilters
from stacklens.performance.network import endpoints, resources
from stacklens.warehouse.side_by_side import side_by_side

KB = 1024  # one KiB: sizes are written with binary prefixes (stacklens.metrics.units)
SEVERITY_ORDER = {"High": 0, "Medium": 1, "Low": 2}
GZIP_SAVING = 0.7  # text assets shrink about 70 % with gzip/brotli
IMAGE_TARGET = 100 * KB  # a web image at display size in WebP/AVIF rarely needs more


def _rec(
    rule: str,
    severity: str,
    subject: str,
    pages: list[str],
    message: str,
    saving: str,
    evidence: dict[str, Any],
) -> dict[str, Any]:
    return {
        "rule": rule,
        "severity": severity,
        "subject": subject,
        "pages": pages,
        "message": message,
        "estimated_saving": saving,
        "evidence": evidence,
    }


def _resource_rules(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    total = sum(r["total_bytes"] for r in rows)
    hosts: dict[str, dict[str, Any]] = {}
    for r in rows:
        kind, size, name = r["resource_type"], r["avg_bytes"], r["resource"]
        base = {
            "requests": r["requests"],
            "loads": r["loads"],
            "avg_bytes": round(size),
            "avg_ms": round(r["avg_ms"], 1),
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
                    f"up to {r['avg_ms']:.0f} ms of first paint on {r['blocking_loads']} page loads",
                    {**base, "blocking_loads": r["blocking_loads"], "fcp_share": r["fcp_share"]},
                )
            )
        lower = name.lower()
        text_asset = kind in ("JavaScript", "CSS") or (kind == "Fonts" and lower.endswith((".ttf", ".otf")))
        uncompressed = (
            (text_asset and size > 10 * KB and r["avg_decoded_bytes"] <= size * 1.05)
            or lower.endswith((".bmp", ".tif", ".tiff"))
            or (lower.endswith(".png") and size > 100 * KB)
        )
        if uncompressed:
            saving = size * GZIP_SAVING if text_asset else max(size - IMAGE_TARGET, size * 0.5)
            out.append(
                _rec(
                    "uncompressed_asset",
                    "Medium",
                    name,
                    r["pages"],
                    f"{name} is served uncompressed or in a format that compresses poorly ({size / KB:.0f} KiB)",
                    f"about {saving / KB:.0f} KiB per request, {saving * r['requests'] / KB / KB:.1f} MiB in the window",
                    {**base, "avg_decoded_bytes": round(r["avg_decoded_bytes"])},
                )
            )
        if kind == "Images" and size > 200 * KB:
            out.append(
                _rec(
                    "oversized_image",
                    "High" if size > KB * KB else "Medium",
                    name,
                    r["pages"],
                    f"Image {name} averages {size / KB:.0f} KiB: resize to its display size and serve WebP/AVIF",
                    f"about {(size - IMAGE_TARGET) / KB:.0f} KiB per request",
                    base,
                )
            )
        if r["third_party"]:
            entry = hosts.setdefault(r["host"], {"bytes": 0, "pages": set(), "resources": 0})
            entry["bytes"] += r["total_bytes"]
            entry["pages"].update(r["pages"])
            entry["resources"] += 1
    for host, entry in sorted(hosts.items()):
        share = entry["bytes"] / total if total else 0.0
        if share > 0.2:
            out.append(
                _rec(
                    "third_party_bytes",
                    "High" if share > 0.5 else "Medium",
                    host,
                    sorted(entry["pages"]),
                    f"{host} (third party) carries {100 * share:.0f} % of the resource bytes",
                    f"{entry['bytes'] / KB / KB:.1f} MiB in the window if removed or self-hosted and trimmed",
                    {
                        "share_pct": round(100 * share, 1),
                        "bytes": entry["bytes"],
                        "resources": entry["resources"],
                    },
                )
            )
    return out


def _endpoint_rules(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for e in rows:
        name = f"{e['method']} {e['path']} ({e['source']})"
        base = {
            "calls": e["calls"],
            "source": e["source"],
            "p95_ms": e["p95_ms"],
            "error_pct": round(e["error_pct"], 1),
        }
        if e["source"] == "client" and (e["avg_bytes"] or 0) > 500 * KB:
            out.append(
                _rec(
                    "large_api_payload",
                    "Medium",
                    name,
                    e["pages"],
                    f"{name} answers {e['avg_bytes'] / KB:.0f} KiB on average: paginate or select fewer fields",
                    f"about {(e['avg_bytes'] - 100 * KB) / KB:.0f} KiB per call",
                    {**base, "avg_bytes": round(e["avg_bytes"])},
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
                    f"{max(per_load - 1, 0):.1f} calls per page load, about {(e['avg_ms'] or 0) * max(per_load - 1, 0):.0f} ms of requests",
                    {**base, "max_per_load": e["max_per_load"], "calls_per_load": round(per_load, 2)},
                )
            )
        if (e["p95_ms"] or 0) > 1000:
            out.append(
                _rec(
                    "slow_endpoint",
                    "High" if e["p95_ms"] > 3000 else "Medium",
                    name,
                    e["pages"],
                    f"{name} is slow: p95 {e['p95_ms']:.0f} ms over {e['calls']} calls",
                    f"about {e['p95_ms'] - 1000:.0f} ms on the slowest 5 % of calls at a 1 s target",
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
                    f"{name} fails {e['error_pct']:.1f} % of {e['calls']} calls",
                    f"{e['s4xx'] + e['s5xx']} failed calls in the window",
                    {**base, "s4xx": e["s4xx"], "s5xx": e["s5xx"]},
                )
            )
    return out


def recommendations(
    client: Client, org_id: int, project_id: int, filters: PerfFilters
) -> list[dict[str, Any]]:
    """Every recommendation for the filters, the most severe first, then by rule and subject. The resource list
    and the endpoint list are read at once (two clients of the warehouse)."""
    resource_rows, endpoint_rows = side_by_side(
        client,
        lambda c: resources(c, org_id, project_id, filters, load_time_p95=False),
        lambda c: endpoints(c, org_id, project_id, filters),
    )
    recs = _resource_rules(resource_rows) + _endpoint_rules(endpoint_rows)
    return sorted(recs, key=lambda r: (SEVERITY_ORDER[r["severity"]], r["rule"], r["subject"]))
