"""The INP view's reads against the interactions seeded (exact figures), the parties adding up, the browsers
without attribution named, the project's own hosts, another organization's rows never counted, and the
catalog's INP part metrics giving the view's page figures (one number everywhere: budgets and rules read
them)."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.explore.query_parser import parse_query
from stacklens.explore.run import run_explore
from stacklens.metrics import QUANTILE_RELATIVE_ERROR as ERROR
from stacklens.performance import window_series, window_values
from stacklens.performance.inp.reads import inp_view
from stacklens.view_filters import ViewFilters
from stacklens.warehouse.client import own_client, second_client, warehouse_client
from stacklens.warehouse.queries import run_query
from tests.conftest import make_settings
from tests.stacklens.performance.inp import inp_seed as s
from tests.stacklens.performance.perf_seed import migrated

ORG, OTHER, PROJECT = 31, 32, 310
AT = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)
PAGE = "http://shop.test/cart"
OWN_CDN = "http://cdn.shop.test/app.js"
WIDGET = "http://widgets.example:8001/widget.js"


def _linear_p75(values: list[float]) -> float:
    return statistics.quantiles(values, n=4, method="inclusive")[2]


@pytest.fixture(scope="module")
def world(tmp_path_factory, warehouse_url) -> Iterator[Client]:
    settings = make_settings(tmp_path_factory.mktemp("inp-world"), warehouse_url)
    client = migrated(settings)
    spans = []
    for i in range(20):
        at = AT + timedelta(minutes=i)
        scripts = [
            s.script("http://shop.test/shop.js", 300.0 + i, "processing", "addToCart", "BUTTON#buy.onclick")
        ]
        if i % 2 == 0:
            scripts.append(s.script(WIDGET, 120.0, "input_delay", "tick", "TimerHandler:setInterval"))
        if i % 5 == 0:
            scripts.append(s.script(OWN_CDN, 10.0, "presentation", "paint"))
        spans.append(s.span(at, PAGE, "button#buy", (100.0 + i, 300.0 + i, 10.0), scripts))
    spans.append(s.span(AT, "http://shop.test/", "a.logo", (5.0, 40.0, 8.0), None))  # no LoAF data
    spans.append(s.span(AT, "http://shop.test/", "a.logo", None, browser="Chrome"))  # Sentry's own span
    s.store(client, ORG, PROJECT, spans)
    # Another organization under the same project id (a page of its own, so the project-wide metric windows,
    # which take project ids as unique, see ORG's alone): never counted in ORG's view.
    other = s.span(
        AT,
        "http://other.test/admin",
        "button#buy",
        (900.0, 900.0, 900.0),
        [s.script(WIDGET, 900.0, "input_delay")],
    )
    s.store(client, OTHER, PROJECT, [other])
    start, end = s.hour_range(AT)
    s.refresh(client, start, end, {PROJECT: ["cdn.shop.test"]})
    yield client
    warehouse_client(settings.resolved_warehouse_url, "default").command(
        "DROP DATABASE IF EXISTS {db:Identifier}", parameters={"db": settings.warehouse_database}
    )


def _filters() -> ViewFilters:
    return ViewFilters.parse(range="24h")


def test_parts_per_page_and_target(world) -> None:
    view = inp_view(world, ORG, PROJECT, _filters())
    cart = next(r for r in view.parts if r.page == "/cart" and r.target == "")
    button = next(r for r in view.parts if r.page == "/cart" and r.target == "button#buy")
    assert cart.interactions == button.interactions == 20 and button.type == "click"
    # Percentiles over the states' 1 % log histograms: within the catalog's stated error of the exact ones.
    assert button.input_delay_p75 == pytest.approx(_linear_p75([100.0 + i for i in range(20)]), rel=ERROR)
    assert button.processing_p75 == pytest.approx(_linear_p75([300.0 + i for i in range(20)]), rel=ERROR)
    assert button.main_part == "processing"
    home = next(r for r in view.parts if r.page == "/" and r.target == "a.logo")
    assert home.interactions == 2 and home.attributed == 1 and home.with_scripts == 0


def test_scripts_ranked_and_parties_add_up(world) -> None:
    view = inp_view(world, ORG, PROJECT, _filters())
    first, second, third = view.scripts[:3]
    assert (first.function, first.third_party, first.main_part) == ("addToCart", False, "processing")
    assert (second.url, second.third_party, second.main_part) == (WIDGET, True, "input_delay")
    assert second.avg_ms == pytest.approx(120.0) and second.runs == 10
    assert third.url == OWN_CDN and third.third_party is False  # one of the project's own hosts
    assert sum(r.share_pct for r in view.scripts) == pytest.approx(100.0)
    cart = next(p for p in view.parties if p.page == "/cart")
    assert cart.third_party_ms == pytest.approx(1200.0)
    assert cart.first_party_ms + cart.third_party_ms == pytest.approx(view.attributed_ms)
    assert (cart.first_party_pct or 0) + (cart.third_party_pct or 0) == pytest.approx(100.0)


def test_browsers_without_data_are_named(world) -> None:
    view = inp_view(world, ORG, PROJECT, _filters())
    chrome = next(b for b in view.browsers if b.browser == "Chrome")
    assert chrome.interactions == 22 and chrome.attributed == 21 and chrome.with_scripts == 20
    assert chrome.gap == ""


def test_another_organization_sees_nothing(world) -> None:
    view = inp_view(world, OTHER, PROJECT, _filters())
    assert view.parts and all(r.input_delay_p75 == pytest.approx(900.0, rel=ERROR) for r in view.parts)
    assert all(p.page != "/admin" for p in inp_view(world, ORG, PROJECT, _filters()).parts)
    assert inp_view(world, 999, PROJECT, _filters()).parts == []


def test_the_reads_side_by_side_answer_as_one_after_the_other(world, warehouse_url, monkeypatch) -> None:
    """The groupings run on the view's client while the scripts and the page loads per browser run on the
    warehouse's second client; on a client with no second one (the three one after the other) the view is the
    same, field for field, for every page and for one."""
    ran: dict[str, list[Client]] = {}

    def recorded(client: Client, name: str, params: dict[str, object]) -> list[dict[str, object]]:
        ran.setdefault(name, []).append(client)
        return run_query(client, name, params)

    monkeypatch.setattr("stacklens.performance.inp.reads.run_query", recorded)
    together = {page: inp_view(world, ORG, PROJECT, _filters(), page) for page in ("", "/cart")}
    other = second_client(world)
    assert other is not None
    assert ran == {
        "performance/inp_parts": [world, world],
        "performance/inp_scripts": [other, other],
        "performance/inp_browsers": [other, other],
    }
    alone = own_client(warehouse_url, world.database)
    try:
        assert second_client(alone) is None
        for page, view in together.items():
            assert view.parts and view.scripts and view.browsers
            assert inp_view(alone, ORG, PROJECT, _filters(), page) == view
    finally:
        alone.close()


def test_the_windows_edge_hours_and_the_freshest_interactions_count(world) -> None:
    """A window read from the hour and day states for its whole hours, from the interactions for its partial
    edge hours — the freshest, the current hour's, among them — counts every interaction once."""
    project, now = PROJECT + 1, datetime.now(UTC)
    delays = {AT + timedelta(minutes=i): 100.0 + i for i in range(10)}
    delays[now - timedelta(seconds=30)] = 400.0  # the current hour: in no whole hour of a window ending now
    spans = [s.span(at, PAGE, "button#buy", (d, 50.0, 10.0), []) for at, d in delays.items()]
    s.store(world, ORG, project, spans)
    s.refresh(world, AT.replace(minute=0, second=0) - timedelta(days=1), now + timedelta(hours=1))
    for since in (now - timedelta(days=1), AT + timedelta(minutes=5)):  # whole days and hours; a cut hour
        filters = ViewFilters(
            since=since.replace(second=0), until=now.replace(second=0) + timedelta(minutes=1)
        )
        [page] = [r for r in inp_view(world, ORG, project, filters).parts if r.target == ""]
        values = [d for at, d in delays.items() if at >= filters.since]
        assert page.interactions == page.attributed == len(values)
        assert page.input_delay_p75 == pytest.approx(_linear_p75(values), rel=ERROR)


@pytest.mark.parametrize(
    ("metric", "field"),
    [
        ("inp_input_delay_ms", "input_delay_p75"),
        ("inp_processing_ms", "processing_p75"),
        ("inp_presentation_ms", "presentation_p75"),
        ("inp_third_party_ms", "third_party_p75"),
    ],
)
def test_metrics_give_the_views_numbers(world, metric: str, field: str) -> None:
    now = datetime.now(UTC)
    filters = ViewFilters(since=now - timedelta(days=1), until=now)
    view = inp_view(world, ORG, PROJECT, filters, page="/cart")
    expected = getattr(next(r for r in view.parts if r.target == ""), field)
    request = window_values.WindowRequest(PROJECT, metric, "p75", "/cart", timedelta(days=1))
    got = window_values.compute(world, request, now)
    assert got.value == pytest.approx(expected) and got.samples == 20
    [(_, value, samples)] = window_series.series(world, request, [now])
    assert value == pytest.approx(expected) and samples == 20
    # Explore's `interactions` dataset over the same window and page: the same p75 and count.
    query = parse_query(
        {
            "dataset": "interactions",
            "since": filters.since.isoformat(),
            "until": filters.until.isoformat(),
            "filters": [{"field": "page", "op": "=", "value": "/cart"}],
            "aggregates": [{"fn": "p75", "metric": metric}, {"fn": "count", "metric": metric}],
        }
    )
    [row] = run_explore(world, query, ORG, [PROJECT]).rows
    assert row[f"{metric.removesuffix('_ms')}_p75_ms"] == pytest.approx(expected)
    assert row[f"count_{metric}"] == 20
