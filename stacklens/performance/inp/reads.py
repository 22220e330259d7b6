"""The INP view (``GET /api/projects/{slug}/performance/inp``, the INP page): which interaction, which part
of it, which script — first party or third (docs/performance.md, "INP causes").

Everything is read from ``inp_interactions`` over the view's window and filters, exact (one row per
interaction): per page and per interaction target and type, INP p75 and the p75 of its three parts with their
sample counts; the scripts of the long animation frames the interactions overlapped, ranked by their share of
the attributed script time; per page, the scripts' time of first and of third parties; per browser, how many
page loads and interactions came with INP, with attribution and with script data — a browser without them is
named ("no script attribution from Firefox"), never shown as 0 ms. The page-level p75 of each part is the
value of the catalog's metric for that page and window (:mod:`stacklens.performance.window_values`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.performance.page_load_reads import load_params
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.queries import float_or_none, run_query
from stacklens.warehouse.side_by_side import side_by_side

PARTS = ("input_delay", "processing", "presentation")
PART_LABELS = {"input_delay": "Input delay", "processing": "Processing", "presentation": "Presentation delay"}
SCRIPT_LIMIT = 50


@dataclass(frozen=True)
class PartRow:
    """A page (``target`` '') or one target and type on it: interactions, those with attribution and with
    script data, and the p75s (ms; ``None`` without samples)."""

    page: str
    target: str
    type: str
    interactions: int
    attributed: int
    with_scripts: int
    inp_p75: float | None
    input_delay_p75: float | None
    processing_p75: float | None
    presentation_p75: float | None
    third_party_p75: float | None

    @property
    def main_part(self) -> str:
        """The part with the largest p75 ('' without attribution)."""
        values = {p: getattr(self, f"{p}_p75") for p in PARTS}
        known = {p: v for p, v in values.items() if v is not None}
        return max(known, key=lambda p: known[p]) if known else ""


@dataclass(frozen=True)
class ScriptRow:
    """A script (source URL, function, invoker) of the interactions' long animation frames: runs, interactions
    it ran in, its time (total, average per run, per part), first or third party, and its share (%) of the
    attributed script time."""

    url: str
    host: str
    function: str
    invoker: str
    third_party: bool
    runs: int
    interactions: int
    ms: float
    avg_ms: float
    input_delay_ms: float
    processing_ms: float
    presentation_ms: float
    share_pct: float

    @property
    def main_part(self) -> str:
        values = {p: getattr(self, f"{p}_ms") for p in PARTS}
        return max(values, key=lambda p: values[p])


@dataclass(frozen=True)
class PartyRow:
    """A page's script time by party over its interactions with script data (ms), and the shares (%) of the
    attributed time; ``third_party_interactions``: those a third-party script ran in."""

    page: str
    interactions: int
    with_scripts: int
    first_party_ms: float
    third_party_ms: float
    third_party_interactions: int
    first_party_pct: float | None
    third_party_pct: float | None


@dataclass(frozen=True)
class BrowserRow:
    """A browser's coverage: page loads, those with INP, interactions, those with attribution and with script
    data; ``gap``: what it does not send, in words ('' when it sends everything)."""

    browser: str
    page_loads: int
    inp_page_loads: int
    interactions: int
    attributed: int
    with_scripts: int
    gap: str


@dataclass(frozen=True)
class InpView:
    parts: list[PartRow]
    scripts: list[ScriptRow]
    parties: list[PartyRow]
    browsers: list[BrowserRow]
    attributed_ms: float  # every script's time in the window: the total the shares are of

    def as_dict(self) -> dict[str, Any]:
        return {
            "parts": [{**asdict(r), "main_part": r.main_part} for r in self.parts],
            "scripts": [{**asdict(r), "main_part": r.main_part} for r in self.scripts],
            "parties": [asdict(r) for r in self.parties],
            "browsers": [asdict(r) for r in self.browsers],
            "attributed_ms": self.attributed_ms,
        }


def _pct(part: float, total: float) -> float | None:
    return 100.0 * part / total if total > 0 else None


def _gap(browser: str, row: dict[str, Any]) -> str:
    name = browser or "unknown browsers"
    if int(row["page_loads"]) and not int(row["inp_page_loads"]) and not int(row["interactions"]):
        return f"no INP from {name}"
    if int(row["interactions"]) and not int(row["attributed"]):
        return f"no INP attribution from {name}"
    if int(row["interactions"]) and not int(row["with_scripts"]):
        return f"no script attribution from {name}"
    return ""


def _part_row(r: dict[str, Any]) -> PartRow:
    return PartRow(
        page=r["page"],
        target=r["element"],
        type=r["kind"],
        interactions=int(r["n"]),
        attributed=int(r["n_attributed"]),
        with_scripts=int(r["n_scripts"]),
        inp_p75=float_or_none(r["inp_p75"]),
        input_delay_p75=float_or_none(r["input_delay_p75"]),
        processing_p75=float_or_none(r["processing_p75"]),
        presentation_p75=float_or_none(r["presentation_p75"]),
        third_party_p75=float_or_none(r["third_party_p75"]),
    )


def _party_row(r: dict[str, Any]) -> PartyRow:
    first, third = float(r["first_sum"]), float(r["third_sum"])
    return PartyRow(
        page=r["page"],
        interactions=int(r["n"]),
        with_scripts=int(r["n_scripts"]),
        first_party_ms=first,
        third_party_ms=third,
        third_party_interactions=int(r["third_party_interactions"]),
        first_party_pct=_pct(first, first + third),
        third_party_pct=_pct(third, first + third),
    )


def _script_row(r: dict[str, Any], total: float) -> ScriptRow:
    return ScriptRow(
        url=r["url"],
        host=r["host"],
        function=r["function"],
        invoker=r["invoker"],
        third_party=bool(r["third"]),
        runs=int(r["runs"]),
        interactions=int(r["interactions"]),
        ms=float(r["ms"]),
        avg_ms=float(r["avg_ms"]),
        input_delay_ms=float(r["input_delay_ms"]),
        processing_ms=float(r["processing_ms"]),
        presentation_ms=float(r["presentation_ms"]),
        share_pct=_pct(float(r["ms"]), total) or 0.0,
    )


def _browsers(loads: list[dict[str, Any]], interactions: list[dict[str, Any]]) -> list[BrowserRow]:
    """Page loads per browser beside its interactions (a browser with interactions but no page loads in the
    states yet is listed too)."""
    by_browser: dict[str, dict[str, Any]] = {
        r["browser"]: {"page_loads": int(r["page_loads"]), "inp_page_loads": int(r["inp_page_loads"])}
        for r in loads
    }
    for r in interactions:
        by_browser.setdefault(r["browser_name"], {"page_loads": 0, "inp_page_loads": 0}).update(
            interactions=int(r["n"]),
            attributed=int(r["n_attributed"]),
            with_scripts=int(r["n_scripts"]),
        )
    rows = []
    for browser, counts in by_browser.items():
        full = {"interactions": 0, "attributed": 0, "with_scripts": 0, **counts}
        rows.append(BrowserRow(browser=browser, **full, gap=_gap(browser, full)))
    return sorted(rows, key=lambda b: (-b.page_loads, -b.interactions, b.browser))


def _scripts_and_loads(
    client: Client, params: dict[str, object]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The scripts, then the page loads per browser: the view's second lane (:func:`inp_view`)."""
    scripts = run_query(client, "performance/inp_scripts", params)
    return scripts, run_query(client, "performance/inp_browsers", params)


def inp_view(client: Client, org_id: int, project_id: int, filters: ViewFilters, page: str = "") -> InpView:
    """The INP view of a project's window and filters, for one page (a route) or all (``page`` ''): three
    reads — the interactions' groupings on ``client``, and beside it, on the warehouse's second client
    (stacklens.warehouse.side_by_side), the scripts then the page loads per browser. Most of each read's time
    is the engine analysing and planning it on one core, so the view takes about its longest read (the
    groupings: two branches, five percentiles) instead of the three reads' sum (bench/RESULTS.md, "INP")."""
    params = load_params(org_id, project_id, filters, page=page, limit=SCRIPT_LIMIT)
    grouped, (script_rows, loads) = side_by_side(
        client,
        lambda own: run_query(own, "performance/inp_parts", params),
        lambda other: _scripts_and_loads(other, params),
    )
    rows = [r for r in grouped if not r["by_browser"]]
    total = float(script_rows[0]["total_ms"]) if script_rows else 0.0
    return InpView(
        parts=[_part_row(r) for r in rows],
        scripts=[_script_row(r, total) for r in script_rows],
        parties=sorted(
            (_party_row(r) for r in rows if not r["element"] and int(r["n_scripts"])),
            key=lambda p: (-(p.first_party_ms + p.third_party_ms), p.page),
        ),
        browsers=_browsers(loads, [r for r in grouped if r["by_browser"]]),
        attributed_ms=total,
    )
