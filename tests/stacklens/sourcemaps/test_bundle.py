"""Bundles checked before anything is stored: a real esbuild build packs and reads back; a corrupt map, a map
for another file (debug id, `file`, line count) and a broken archive are refused naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stacklens.sourcemaps.bundle import BundleError, read_bundle
from stacklens.sourcemaps.packing import bundle_of, pack
from tests.stacklens.sourcemaps.app_bundle import build_app


def test_a_real_build_packs_and_reads_back(tmp_path: Path) -> None:
    dist = build_app(tmp_path, inject=True)
    bundle = bundle_of([dist], "web@1.0", "d1", "~/static/")
    data = pack(bundle)
    assert pack(bundle_of([dist], "web@1.0", "d1", "~/static/")) == data  # deterministic: same checksum
    again = read_bundle(data)
    assert (again.release, again.dist) == ("web@1.0", "d1")
    files = {f.url: f for f in again.files}
    assert files["~/static/app.min.js"].sourcemap == "app.min.js.map"
    assert files["~/static/app.min.js"].debug_id == files["~/static/app.min.js.map"].debug_id != ""


def _refused(dist: Path, change: dict) -> str:
    map_path = dist / "app.min.js.map"
    obj = json.loads(map_path.read_text())
    obj.update(change)
    map_path.write_text(json.dumps(obj))
    with pytest.raises(BundleError) as refused:
        bundle_of([dist], "web@1.0")
    return str(refused.value)


def test_maps_for_another_file_are_refused(tmp_path: Path) -> None:
    dist = build_app(tmp_path / "a", inject=True)
    message = _refused(dist, {"debugId": "00000000-0000-4000-8000-000000000000"})
    assert message.startswith("~/app.min.js.map is a map for another file: its debug id")
    dist = build_app(tmp_path / "b")
    assert "maps line 41" in _refused(dist, {"mappings": ";" * 40 + "AAAA"})


def test_corrupt_maps_and_archives_are_refused(tmp_path: Path) -> None:
    dist = build_app(tmp_path)
    assert "is not a valid source map: `version` is 2" in _refused(dist, {"version": 2})
    (dist / "app.min.js.map").write_text('{"version": 3, "sources": ["a.js"], "mappings": "AAAA,!!"')
    with pytest.raises(BundleError, match=r"app.min.js.map is not a valid source map: not JSON"):
        bundle_of([dist], "web@1.0")
    with pytest.raises(BundleError, match="not a zip archive"):
        read_bundle(b"PK\x03\x04 this is not a zip")
