"""Matching and applying maps to a real stack: the esbuild bundle run in Node, its frames symbolicated
against the warehouse, and the reason on every frame that stays minified."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from clickhouse_connect.driver.client import Client

from stacklens.issues.payload_exceptions import exceptions
from stacklens.settings import Settings
from stacklens.sourcemaps import store
from stacklens.sourcemaps.packing import bundle_of
from stacklens.sourcemaps.sourcemap import MapCache
from stacklens.sourcemaps.symbolicate import Resolver, symbolicate, url_candidates
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.migrations import discover
from tests.stacklens.sourcemaps.app_bundle import THROW_LINE, build_app

ORG, PROJECT = 7, 70
SERVED = "https://shop.test/static/app.min.js"


@pytest.fixture
def client(settings: Settings) -> Client:
    ensure_database(settings)
    warehouse = get_warehouse(settings)
    for migration in discover():
        if migration.name.startswith(("0006", "0007")):
            for statement in migration.statements(settings.retention_days):
                warehouse.command(statement)
    return warehouse


def node_frames(script: Path) -> list[dict[str, Any]]:
    """The real stack Node gives for the bundle's error, as Sentry frames (oldest call first)."""
    code = (
        "globalThis.window = globalThis; require(process.argv[1]);"
        "try { window.checkoutButtonClicked(); } catch (e) { console.log(e.stack); }"
    )
    out = subprocess.run(["node", "-e", code, str(script)], capture_output=True, text=True, check=True).stdout
    frames = []
    for match in re.finditer(r"at (?:(\S+) \()?\S*app\.min\.js:(\d+):(\d+)\)?", out):
        frames.append(
            {"function": match.group(1) or "?", "abs_path": SERVED, "filename": "/static/app.min.js",
             "lineno": int(match.group(2)), "colno": int(match.group(3)), "in_app": True}
        )  # fmt: skip
    assert len(frames) >= 2, out
    return list(reversed(frames))


def payload(frames: list[dict[str, Any]], release: str = "", debug_id: str = "") -> dict[str, Any]:
    event: dict[str, Any] = {
        "platform": "javascript",
        "release": release,
        "exception": {"values": [{"type": "RangeError", "value": "quantity must be positive", "stacktrace": {"frames": frames}}]},
    }  # fmt: skip
    if debug_id:
        event["debug_meta"] = {"images": [{"type": "sourcemap", "code_file": SERVED, "debug_id": debug_id}]}
    return event


def shown(client: Client, event: dict[str, Any]) -> list[dict[str, Any]]:
    chain = exceptions(event)
    symbolicate(Resolver(client, ORG, PROJECT, MapCache()), event, chain)
    return list(chain[0]["frames"])


def upload(client: Client, dist: Path, release: str, prefix: str = "~/static/") -> str:
    bundle = bundle_of([dist], release, "", prefix)
    bundle_id = store.sha1_hex(repr([(f.url, f.content) for f in bundle.files]).encode())
    store.put_bundle(client, ORG, [PROJECT], bundle_id, bundle)
    return bundle_id


def test_debug_id_maps_to_original_function_line_and_context(client: Client, tmp_path: Path) -> None:
    dist = build_app(tmp_path, inject=True)
    debug_id = (dist / "app.min.js").read_text().rsplit("debugId=", 1)[1].strip()
    event = payload(node_frames(dist / "app.min.js"), debug_id=debug_id)
    before = shown(client, event)
    assert before[0]["sourcemap_note"] == f"debug id {debug_id} unknown: no uploaded map has it"
    upload(client, dist, "")  # uploaded after the error, without a release: the debug id finds it
    top, caller = shown(client, event)[:2]
    assert top["filename"] == "src/cart.js" and top["lineno"] == THROW_LINE
    assert top["function"] == "computeTotal" and top["in_app"] is True
    assert "throw new RangeError" in top["context_line"]
    assert len(top["pre_context"]) == 5 and len(top["post_context"]) == 5
    assert top["sourcemap_via"] == f"debug id {debug_id}" and top["minified"].startswith(
        "/static/app.min.js:"
    )
    assert caller["filename"] == "src/main.js" and caller["lineno"] == 5
    assert caller["function"] == "checkoutButtonClicked"
    assert "return computeTotal(basket)" in caller["context_line"]


def test_release_and_url_matching_and_the_reasons(client: Client, tmp_path: Path) -> None:
    dist = build_app(tmp_path)
    frames = node_frames(dist / "app.min.js")
    assert shown(client, payload(frames))[0]["sourcemap_note"] == (
        "the event has no release and its file has no debug id"
    )
    assert shown(client, payload(frames, "web@1.0"))[0]["sourcemap_note"] == "no bundle for release web@1.0"
    upload(client, dist, "web@1.0")
    top = shown(client, payload(frames, "web@1.0"))[0]
    assert (top["filename"], top["lineno"]) == ("src/cart.js", THROW_LINE)
    assert top["sourcemap_via"] == "release web@1.0, ~/static/app.min.js"

    elsewhere = [{**f, "abs_path": "https://shop.test/static/other.min.js"} for f in frames]
    assert shown(client, payload(elsewhere, "web@1.0"))[0]["sourcemap_note"] == (
        "no map for https://shop.test/static/other.min.js in release web@1.0"
    )
    off_map = [{**f, "lineno": 1, "colno": 1} for f in frames]
    assert (
        "has no mapping at line 1, column 1"
        in shown(client, payload(off_map, "web@1.0"))[0]["sourcemap_note"]
    )


def test_a_bare_file_name_never_picks_another_folders_file(client: Client, tmp_path: Path) -> None:
    dist = build_app(tmp_path)
    upload(client, dist, "web@2.0", prefix="~/admin/")  # the admin app's app.min.js, not the shop's
    frames = node_frames(dist / "app.min.js")
    note = shown(client, payload(frames, "web@2.0"))[0]["sourcemap_note"]
    assert note == f"no map for {SERVED} in release web@2.0"
    assert url_candidates(SERVED) == [SERVED, "~/static/app.min.js", "~/app.min.js"]


def test_a_deleted_bundle_leaves_frames_minified(client: Client, tmp_path: Path) -> None:
    dist = build_app(tmp_path)
    bundle_id = upload(client, dist, "web@3.0")
    frames = node_frames(dist / "app.min.js")
    assert shown(client, payload(frames, "web@3.0"))[0]["lineno"] == THROW_LINE
    assert store.delete_bundle(client, ORG, PROJECT, bundle_id)
    assert shown(client, payload(frames, "web@3.0"))[0]["sourcemap_note"] == "no bundle for release web@3.0"
    assert store.bundles(client, ORG, PROJECT) == []
