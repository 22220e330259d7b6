"""Grouping by original frames at ingest: real esbuild builds run in Node, their maps uploaded, their errors
landed through the ingest service (in-process and through real worker processes) into the embedded
warehouse, and the issues they land in read back."""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from clickhouse_connect.driver.client import Client

from stacklens.ingest.front_door import settle_front_doors
from stacklens.ingest.grouping import v2
from stacklens.ingest.service import ingest_batch, ingest_body
from stacklens.ingest.workers import POOL_MIN_RAW_BYTES, AppKeyResolver, close_pools, pool_for
from stacklens.settings import Settings
from stacklens.sourcemaps import store
from stacklens.sourcemaps.bundle import Bundle, BundleFile
from stacklens.sourcemaps.grouping import SourceMapGrouping
from stacklens.sourcemaps.manifest import Manifest
from stacklens.sourcemaps.packing import bundle_of
from stacklens.sourcemaps.sourcemap import MapCache
from stacklens.warehouse.client import get_warehouse
from stacklens.warehouse.migrations import apply_migrations
from tests.api.routers.test_ingest import error_payload, line
from tests.stacklens.sourcemaps.app_bundle import build_app
from tests.stacklens.sourcemaps.test_symbolicate import node_frames

# A second build of the same source: esbuild keeps the names (`computeTotal`) where `--minify` gives `n`.
OTHER_MINIFICATION = ("--minify-whitespace", "--minify-syntax")


@pytest.fixture
def org(settings: Settings, make_org) -> dict[str, Any]:
    apply_migrations(settings, up_to=99)
    return make_org("Acme")


def js_event(frames: list[dict[str, Any]], release: str) -> dict[str, Any]:
    return {
        "event_id": uuid.uuid4().hex,
        "platform": "javascript",
        "release": release,
        "timestamp": time.time(),
        "exception": {"values": [{"type": "RangeError", "value": "quantity must be positive",
                                  "stacktrace": {"frames": frames}}]},
    }  # fmt: skip


def upload(client: Client, org: dict[str, Any], dist: Path, release: str) -> str:
    bundle = bundle_of([dist], release, "", "~/static/")
    bundle_id = store.sha1_hex(repr([(f.url, f.content) for f in bundle.files]).encode())
    store.put_bundle(client, int(org["org_id"]), [int(org["project_id"])], bundle_id, bundle)
    return bundle_id


def land(settings: Settings, org: dict[str, Any], *events: dict[str, Any]) -> None:
    body = b"\n".join(line(event, str(org["app_key"])) for event in events)
    org_id = int(org["org_id"])
    result = ingest_batch(
        settings,
        org_id,
        body,
        header_app_key=None,
        idempotency_key=None,
        resolve=AppKeyResolver(settings, org_id),
        take_events=lambda n: None,
    )
    assert result.accepted == len(events), result.rejected
    assert settle_front_doors()  # the tests read the warehouse directly


def stored(client: Client, event_id: str) -> dict[str, Any]:
    rows = client.query(
        "SELECT issue_id, fingerprint, grouping_version, in_app_frames, payload FROM events "
        "WHERE event_id = {id:String}",
        parameters={"id": event_id},
    ).named_results()
    found = list(rows)
    assert len(found) == 1, event_id
    return found[0]


def builds(tmp_path: Path) -> tuple[Path, Path]:
    first = build_app(tmp_path / "first")
    second = build_app(tmp_path / "second", minify=OTHER_MINIFICATION)
    return first, second


def test_two_builds_of_the_same_source_land_in_one_issue(
    settings: Settings, org: dict[str, Any], tmp_path: Path
) -> None:
    client = get_warehouse(settings)
    first, second = builds(tmp_path)
    upload(client, org, first, "shop@1")
    upload(client, org, second, "shop@2")
    one = js_event(node_frames(first / "app.min.js"), "shop@1")
    two = js_event(node_frames(second / "app.min.js"), "shop@2")
    # The minified names differ (`n` and `computeTotal`): by its minified frames each build is its own issue.
    assert v2.fingerprint_event(one).hash != v2.fingerprint_event(two).hash

    land(settings, org, one, two)

    a, b = stored(client, one["event_id"]), stored(client, two["event_id"])
    assert a["grouping_version"] == b["grouping_version"] == "v3"
    assert a["issue_id"] == b["issue_id"] and a["fingerprint"] == b["fingerprint"]
    assert a["in_app_frames"] == ["cart.js:computeTotal", "main.js:checkoutButtonClicked"]
    # The original frames the fingerprint was made of are kept with the event (innermost last).
    grouping_frames = orjson.loads(a["payload"])["grouping_frames"]
    assert grouping_frames[-1]["filename"] == "src/cart.js"
    assert grouping_frames[-1]["function"] == "computeTotal"
    assert "throw new RangeError" in grouping_frames[-1]["context_line"]


def test_events_without_a_map_keep_their_v2_fingerprint(
    settings: Settings, org: dict[str, Any], tmp_path: Path
) -> None:
    client = get_warehouse(settings)
    first, _ = builds(tmp_path)
    frames = node_frames(first / "app.min.js")
    before_any_upload = js_event(frames, "shop@1")
    python_error = dict(error_payload(), event_id=uuid.uuid4().hex)
    land(settings, org, before_any_upload, python_error)
    upload(client, org, first, "shop@1")
    other_release = js_event(frames, "shop@9")  # the organization has maps, but none for this release
    land(settings, org, other_release)

    for event in (before_any_upload, python_error, other_release):
        row = stored(client, event["event_id"])
        assert row["grouping_version"] == "v2"
        assert row["fingerprint"] == v2.fingerprint_event(event).hash
        assert "grouping_frames" not in orjson.loads(row["payload"])


def test_an_event_before_the_upload_keeps_its_issue(
    settings: Settings, org: dict[str, Any], tmp_path: Path
) -> None:
    client = get_warehouse(settings)
    first, _ = builds(tmp_path)
    frames = node_frames(first / "app.min.js")
    early = js_event(frames, "shop@1")
    land(settings, org, early)
    issue_before = stored(client, early["event_id"])["issue_id"]

    upload(client, org, first, "shop@1")  # this process sees the upload at once
    late = js_event(frames, "shop@1")
    land(settings, org, late)

    # The new event is grouped by its original frames (a new issue, as Sentry does once a map exists);
    # the early event is not regrouped.
    assert stored(client, late["event_id"])["grouping_version"] == "v3"
    assert stored(client, late["event_id"])["issue_id"] != issue_before
    assert stored(client, early["event_id"])["issue_id"] == issue_before
    assert stored(client, early["event_id"])["grouping_version"] == "v2"


def test_events_from_worker_processes_are_grouped_by_their_maps(
    settings: Settings, org: dict[str, Any], tmp_path: Path
) -> None:
    client = get_warehouse(settings)
    first, second = builds(tmp_path)
    upload(client, org, first, "shop@1")
    upload(client, org, second, "shop@2")
    one = js_event(node_frames(first / "app.min.js"), "shop@1")
    two = js_event(node_frames(second / "app.min.js"), "shop@2")
    error = error_payload()
    # Enough error events for a batch the workers take (an event's size is the SDK's: it varies).
    fillers = POOL_MIN_RAW_BYTES // len(line(error, str(org["app_key"]))) + 1
    filler = [dict(error, event_id=uuid.uuid4().hex) for _ in range(fillers)]
    lines = [line(e, str(org["app_key"])) for e in [one, *filler, two]]
    body = b"\n".join(lines)
    assert len(body) >= POOL_MIN_RAW_BYTES  # prepared by the workers, who defer the two JS events
    current = settings.model_copy(update={"ingest_workers": 2})
    try:
        pool_for(current).warm_up()  # as the first large batch does, in the background
        result = ingest_body(
            current,
            int(org["org_id"]),
            body,
            None,
            header_app_key=None,
            idempotency_key=None,
            take_events=lambda n: None,
        )
    finally:
        close_pools()

    assert (result.accepted, result.rejected) == (len(lines), [])
    a, b = stored(client, one["event_id"]), stored(client, two["event_id"])
    assert a["grouping_version"] == b["grouping_version"] == "v3" and a["issue_id"] == b["issue_id"]
    assert stored(client, filler[0]["event_id"])["grouping_version"] == "v2"


def test_a_map_that_cannot_be_read_leaves_the_event_grouped_as_sent(
    settings: Settings, org: dict[str, Any], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    client = get_warehouse(settings)
    first, _ = builds(tmp_path)
    minified = (first / "app.min.js").read_bytes()
    broken = Bundle("shop@1", "", [BundleFile("~/static/app.min.js", "minified_source", minified),
                                   BundleFile("~/static/app.min.js.map", "source_map", b'{"version": 3, "mappings')])  # fmt: skip
    store.put_bundle(client, int(org["org_id"]), [int(org["project_id"])], "broken", broken)
    event = js_event(node_frames(first / "app.min.js"), "shop@1")
    land(settings, org, event)
    row = stored(client, event["event_id"])
    assert row["grouping_version"] == "v2" and row["fingerprint"] == v2.fingerprint_event(event).hash

    # A map that takes longer than the batch may wait: grouped as sent, logged, never failed.
    store.delete_bundle(client, int(org["org_id"]), int(org["project_id"]), "broken")
    upload(client, org, first, "shop@1")
    slow = SourceMapGrouping(client, int(org["org_id"]), cache=MapCache(), wait_seconds=0.000_001)
    with caplog.at_level(logging.WARNING, logger="stacklens.sourcemaps.grouping"):
        assert slow(int(org["project_id"]), event) is None
        assert slow(int(org["project_id"]), event) is None  # the batch's wait is spent
    assert "grouped by its minified frames" in caplog.text
    assert SourceMapGrouping(client, int(org["org_id"]))(int(org["project_id"]), event) is not None


class CountingClient:
    """The warehouse client, counting the queries made through it."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.queries = 0

    def query(self, *args: Any, **kwargs: Any) -> Any:
        self.queries += 1
        return self.client.query(*args, **kwargs)


def test_cached_manifest_needs_no_query_and_sees_changes(
    settings: Settings, org: dict[str, Any], tmp_path: Path
) -> None:
    from stacklens.issues.payload_exceptions import exceptions
    from stacklens.sourcemaps.symbolicate import Resolver, symbolicate

    client = get_warehouse(settings)
    first, _ = builds(tmp_path)
    org_id, project_id = int(org["org_id"]), int(org["project_id"])
    counting = CountingClient(client)
    now = [0.0]
    manifest = Manifest(counting, ttl=10, clock=lambda: now[0])
    resolver = Resolver(counting, org_id, project_id, MapCache(), manifest)
    event = js_event(node_frames(first / "app.min.js"), "shop@1")

    def mapped() -> int:
        return symbolicate(resolver, event, exceptions(event))

    assert mapped() == 0
    bundle_id = upload(client, org, first, "shop@1")
    assert mapped() == 2  # an upload in this process is seen at once
    counting.queries = 0
    assert mapped() == 2 and counting.queries == 0  # cached: no warehouse query at all

    # Another organization's uploads of the same release are never this one's.
    assert manifest.candidate_files(org_id + 1000, project_id, "shop@1", "", []) == []

    # A delete made by another server process (no notice here) is seen once the TTL has passed.
    client.command(
        "DELETE FROM sourcemap_files WHERE org_id = {org:UInt64} AND bundle_id = {b:String}",
        parameters={"org": org_id, "b": bundle_id},
    )
    assert mapped() == 2
    now[0] += 11
    assert mapped() == 0
