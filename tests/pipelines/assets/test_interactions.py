"""The `inp_interactions` asset and its states: in the graph with their checks, in the performance job, the
projects' own hosts passed to its query aligned by project, and the parts @sentry/browser's frames take."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

from pipelines.assets.interactions import host_parameters
from pipelines.definitions import defs
from pipelines.jobs import PARTITIONED_JOB_INPUTS, PERFORMANCE_ASSETS
from stacklens.performance.inp.reads import inp_view
from stacklens.view_filters import ViewFilters
from tests.conftest import make_settings
from tests.stacklens.performance.inp import inp_seed as s
from tests.stacklens.performance.perf_seed import migrated

ORG, PROJECT = 41, 410
PAGE = "http://shop.test/cart"


def test_the_asset_is_in_the_graph_and_the_performance_job() -> None:
    keys = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    assert "inp_interactions" in keys and "inp_interactions" in PERFORMANCE_ASSETS
    assert "inp_interactions" in PARTITIONED_JOB_INPUTS["performance_job"][0]
    # Its hour and day states, written by the same step (the INP view reads them).
    for states in ("inp_periods", "inp_script_periods"):
        assert states in keys and states in PERFORMANCE_ASSETS


def test_hosts_are_aligned_with_their_projects() -> None:
    assert host_parameters({9: ["b.test"], 3: ["a.test", "c.test:81"]}) == {
        "fp_projects": [3, 9],
        "fp_hosts": [["a.test", "c.test:81"], ["b.test"]],
    }
    assert host_parameters({}) == {"fp_projects": [], "fp_hosts": []}


def test_sentry_frames_take_the_part_their_end_says(tmp_path: Path, warehouse_url: str) -> None:
    """@sentry/browser's INP spans with their page loads' long animation frames (no parts of their own): a
    frame that began before the input but ran to the interaction's end held its processing (another task
    opened it just before the click); one that began before and ended well before was input delay; one after
    the input is processing; the last frame of a listener of the interaction's own events is processing
    however long before the paint it ended, an earlier one input delay."""
    client = migrated(make_settings(tmp_path, warehouse_url))
    at = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
    handler, queued = uuid.uuid4().hex, uuid.uuid4().hex
    # The click at `at` lasts 320 ms (the span's end): the frame that ran its handler opened 20 ms before it
    # and ended 6 ms before the interaction's paint.
    spans = [s.span(at, PAGE, "button#buy", None, trace_id=handler)]
    s.store_frames(
        client,
        ORG,
        PROJECT,
        handler,
        [(at - timedelta(milliseconds=20), 334.0, "addToCart", "BUTTON#buy.onclick")],
    )
    # The second click waited for a timer's frame that ended 200 ms before it did, then its own handler ran.
    later = at + timedelta(minutes=5)
    spans.append(s.span(later, PAGE, "button#buy", None, trace_id=queued))
    s.store_frames(
        client,
        ORG,
        PROJECT,
        queued,
        [
            (later - timedelta(milliseconds=50), 170.0, "tick", "TimerHandler:setInterval"),
            (later + timedelta(milliseconds=125), 190.0, "addToCart", "BUTTON#buy.onclick"),
        ],
    )
    # On a loaded machine: the frame that ran the third click's handler opened 2 ms before the input, and the
    # paint came 100 ms after the frame (the interaction lasts 180 ms): its own listener held the processing.
    loaded = at + timedelta(minutes=10)
    spans.append(s.span(loaded, PAGE, "button#pay", None, trace_id=(slow := uuid.uuid4().hex)))
    s.store_frames(
        client, ORG, PROJECT, slow, [(loaded - timedelta(milliseconds=2), 82.0, "pay", "BUTTON#pay.onclick")]
    )
    # The fourth click came while a previous click's handler still ran; its own handler's frame came after.
    # The last frame of a click listener is its own; the earlier one kept it waiting.
    queued_click = at + timedelta(minutes=15)
    spans.append(s.span(queued_click, PAGE, "button#buy", None, trace_id=(waited := uuid.uuid4().hex)))
    s.store_frames(
        client,
        ORG,
        PROJECT,
        waited,
        [
            (queued_click - timedelta(milliseconds=60), 90.0, "addToWishlist", "BUTTON#wish.onclick"),
            (queued_click + timedelta(milliseconds=40), 120.0, "addToCart", "BUTTON#buy.onclick"),
        ],
    )
    s.store(client, ORG, PROJECT, spans)
    s.refresh(client, *s.hour_range(at))
    scripts = {r.function: r for r in inp_view(client, ORG, PROJECT, ViewFilters.parse(range="24h")).scripts}
    assert {f: (r.interactions, r.main_part) for f, r in scripts.items()} == {
        "addToCart": (3, "processing"),
        "tick": (1, "input_delay"),
        "pay": (1, "processing"),
        "addToWishlist": (1, "input_delay"),
    }
    assert scripts["addToCart"].input_delay_ms == 0 and scripts["tick"].processing_ms == 0
    assert scripts["pay"].input_delay_ms == 0 and scripts["addToWishlist"].processing_ms == 0
