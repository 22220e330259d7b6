"""Minified files and their maps packed as sentry-cli packs them: named by URL, debug ids read, the same
build giving the same bytes."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

from stacklens.errors import InvalidInput
from stacklens.sourcemaps.packing import bundle_of, collect, pack

DEBUG_ID = "6799075f-65e7-4bc0-8a2b-0f3d1c2b4a5e"


def _build(root: Path) -> Path:
    static = root / "dist" / "static"
    static.mkdir(parents=True)
    (static / "app.min.js").write_text(
        f"function a(){{throw new Error('x')}}a();\n//# debugId={DEBUG_ID}\n//# sourceMappingURL=app.min.js.map\n"
    )
    source_map = {
        "version": 3,
        "file": "app.min.js",
        "sources": ["app.js"],
        "names": [],
        "mappings": "AAAA",
        "debugId": DEBUG_ID,
    }
    (static / "app.min.js.map").write_text(json.dumps(source_map))
    (static / "style.css").write_text("body{}")
    return root / "dist"


def test_files_are_named_by_url_and_carry_their_debug_ids(tmp_path: Path) -> None:
    dist = _build(tmp_path)
    assert [url for url, _ in collect([dist], "~/assets")] == [
        "~/assets/static/app.min.js",
        "~/assets/static/app.min.js.map",
    ]
    bundle = bundle_of([dist], "shop@1.0", "web")
    assert [(f.url, f.file_type, f.debug_id) for f in bundle.files] == [
        ("~/static/app.min.js", "minified_source", DEBUG_ID),
        ("~/static/app.min.js.map", "source_map", DEBUG_ID),
    ]
    assert bundle.files[0].sourcemap == "app.min.js.map"


def test_the_archive_is_sentry_clis_layout_and_deterministic(tmp_path: Path) -> None:
    bundle = bundle_of([_build(tmp_path)], "shop@1.0")
    packed = pack(bundle, "acme", "web")
    assert packed == pack(bundle, "acme", "web")
    with zipfile.ZipFile(io.BytesIO(packed)) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        assert sorted(archive.namelist()) == [
            "files/_/_/static/app.min.js",
            "files/_/_/static/app.min.js.map",
            "manifest.json",
        ]
    assert (manifest["org"], manifest["project"], manifest["release"]) == ("acme", "web", "shop@1.0")
    assert manifest["files"]["files/_/_/static/app.min.js"]["headers"] == {
        "debug-id": DEBUG_ID,
        "sourcemap": "app.min.js.map",
    }


def test_nothing_to_pack_is_said_plainly(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no such file or folder"):
        collect([tmp_path / "missing"])
    (tmp_path / "readme.txt").write_text("x")
    with pytest.raises(InvalidInput, match=r"no \.js or \.map files"):
        collect([tmp_path])
