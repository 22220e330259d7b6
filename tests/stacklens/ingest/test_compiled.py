"""The build's list of compiled ingest modules matches the tree, and an outdated build is detected."""

from __future__ import annotations

import importlib
import importlib.machinery
import os
from pathlib import Path

from stacklens.ingest.compiled import COMPILED_MODULES, stale_modules

ROOT = Path(__file__).resolve().parents[3]


def test_every_compiled_module_is_a_source_file_of_the_tree() -> None:
    for name in COMPILED_MODULES:
        assert (ROOT / (name.replace(".", "/") + ".py")).is_file(), name
        importlib.import_module(name)
    # The grouping versions are compiled, the registry (one dict look-up) is not.
    assert "stacklens.ingest.grouping.v1" in COMPILED_MODULES
    assert "stacklens.ingest.grouping" not in COMPILED_MODULES


def test_an_extension_older_than_its_source_is_stale(tmp_path: Path) -> None:
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in COMPILED_MODULES:
        source = tmp_path / (name.replace(".", "/") + ".py")
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_text("")
    fresh = tmp_path / "stacklens/ingest/scrub.py"
    old = tmp_path / "stacklens/ingest/grouping/v1.py"
    fresh.with_suffix(suffix).write_bytes(b"")
    old.with_suffix(suffix).write_bytes(b"")
    os.utime(old.with_suffix(suffix), (old.stat().st_mtime - 60, old.stat().st_mtime - 60))
    assert stale_modules(tmp_path) == ["stacklens.ingest.grouping.v1"]
