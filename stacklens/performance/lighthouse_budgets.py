"""Budgets to and from Lighthouse CI's ``budget.json``: an array of ``{path, timings: [{metric, budget}],
resourceSizes: [{resourceType, budget}], resourceCounts: [...]}``.

What maps: the timings ``first-contentful-paint``, ``largest-contentful-paint``, ``cumulative-layout-shift``
and ``server-response-time`` (TTFB), in ms (CLS unitless); the resource sizes ``script`` (JavaScript size)
and ``total`` (transfer size), in KiB. Lab-only timings (``interactive``, ``total-blocking-time``,
``speed-index``, …), the other resource types and every resource count have no field measurement here:
they are reported, not imported. Paths: a missing path, ``/`` and ``/*`` are all pages; ``/route$`` is
that route exactly; other paths are route patterns as they are (``*`` matches any characters).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from stacklens.control.budgets import BudgetRow
from stacklens.ingest import jsondepth
from stacklens.performance.budget_rules import BudgetDefinition, BudgetError, validate_budget

TIMINGS = {
    "first-contentful-paint": "fcp_ms",
    "largest-contentful-paint": "lcp_ms",
    "cumulative-layout-shift": "cls",
    "server-response-time": "ttfb_ms",
}
SIZES = {"script": "js_bytes", "total": "transfer_bytes"}
KIB = 1024
MAX_BYTES = 1_000_000


@dataclass
class Imported:
    budgets: list[BudgetDefinition] = field(default_factory=list)
    not_mapped: list[str] = field(default_factory=list)


def _scope(path: object, where: str) -> str:
    if path is None:
        return "*"
    if not isinstance(path, str):
        raise BudgetError("must be a string such as /checkout or /*", f"{where}.path")
    path = path.strip()
    if path in ("", "/", "/*"):
        return "*"
    return path[:-1] if path.endswith("$") else path


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BudgetError(f"must be a number, not {value!r}", where)
    return float(value)


def _items(entry: dict[str, Any], key: str, where: str) -> list[Any]:
    items = entry.get(key) or []
    if not isinstance(items, list):
        raise BudgetError("must be an array", f"{where}.{key}")
    return items


def parse(text: str | bytes, pages_seen: Collection[str] | None = None) -> Imported:
    """Every budget of the file (validated, not saved) and what could not be mapped, or
    :class:`BudgetError` naming the first bad field: nothing of a bad file is imported."""
    if len(text) > MAX_BYTES:
        raise BudgetError(f"is over {MAX_BYTES} bytes", "budget.json")
    try:
        data = jsondepth.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise BudgetError(f"is not JSON ({exc})", "budget.json") from exc
    if not isinstance(data, list):
        raise BudgetError("must be a JSON array of budgets (Lighthouse CI's shape)", "budget.json")
    out = Imported()
    seen: dict[tuple[str, str], str] = {}
    for i, entry in enumerate(data):
        where = f"budget.json[{i}]"
        if not isinstance(entry, dict):
            raise BudgetError("must be an object with path, timings and resourceSizes", where)
        scope = _scope(entry.get("path"), where)
        pairs: list[tuple[str, str, object, float]] = []  # (field, name, metric or None, value)
        for j, timing in enumerate(_items(entry, "timings", where)):
            at = f"{where}.timings[{j}]"
            if not isinstance(timing, dict) or not isinstance(timing.get("metric"), str):
                raise BudgetError("must be an object with metric and budget", at)
            name = timing["metric"]
            value = _number(timing.get("budget"), f"{at}.budget")
            pairs.append((at, f"timing {name}", TIMINGS.get(name), value))
        for j, size in enumerate(_items(entry, "resourceSizes", where)):
            at = f"{where}.resourceSizes[{j}]"
            if not isinstance(size, dict) or not isinstance(size.get("resourceType"), str):
                raise BudgetError("must be an object with resourceType and budget", at)
            name = size["resourceType"]
            value = _number(size.get("budget"), f"{at}.budget") * KIB
            pairs.append((at, f"resource size {name}", SIZES.get(name), value))
        for j, count in enumerate(_items(entry, "resourceCounts", where)):
            kind = count.get("resourceType") if isinstance(count, dict) else None
            out.not_mapped.append(f"{where}.resourceCounts[{j}]: resource count {kind} (no count budgets)")
        for at, name, metric, value in pairs:
            if metric is None:
                out.not_mapped.append(f"{at}: {name} (no field measurement of it)")
                continue
            try:
                definition = validate_budget(str(metric), scope, value, pages_seen=pages_seen)
            except BudgetError as exc:
                raise BudgetError(str(exc), at) from exc
            key = (definition.metric, definition.scope)
            if key in seen:
                raise BudgetError(
                    f"{definition.metric} on {definition.scope} is already set by {seen[key]}", at
                )
            seen[key] = at
            out.budgets.append(definition)
    return out


def export(rows: list[BudgetRow]) -> tuple[list[dict[str, Any]], list[str]]:
    """The budgets as ``budget.json`` entries (one per scope) and those Lighthouse cannot express."""
    timings = {v: k for k, v in TIMINGS.items()}
    sizes = {v: k for k, v in SIZES.items()}
    entries: dict[str, dict[str, Any]] = {}
    skipped = []
    for row in rows:
        path = "/*" if row.scope == "*" else (row.scope + "$" if "*" not in row.scope else row.scope)
        if row.metric in timings and row.statistic == "p75":
            entry = entries.setdefault(path, {"path": path})
            entry.setdefault("timings", []).append({"metric": timings[row.metric], "budget": row.value})
        elif row.metric in sizes:
            entry = entries.setdefault(path, {"path": path})
            entry.setdefault("resourceSizes", []).append(
                {"resourceType": sizes[row.metric], "budget": row.value / KIB}
            )
        else:
            skipped.append(f"{row.metric} {row.statistic} on {row.scope} (no Lighthouse budget for it)")
    return list(entries.values()), skipped
