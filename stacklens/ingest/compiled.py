"""Which ingest modules the build compiles with Cython (``setup.py``), and whether a build is out of date.

Kept free of imports beyond the standard library: ``setup.py`` reads the list before anything is installed.
"""

from __future__ import annotations

import importlib.machinery
from pathlib import Path

# The per-line path of POST /api/ingest: parse and check, scrub, normalise, group, encode.
COMPILED_MODULES = (
    "stacklens.ingest.prepare",
    "stacklens.ingest.prepared_rows",
    "stacklens.ingest.prepare_items",
    "stacklens.ingest.validate",
    "stacklens.ingest.jsondepth",
    "stacklens.ingest.scrub",
    "stacklens.ingest.card_numbers",
    "stacklens.ingest.secret_redaction",
    "stacklens.ingest.normalise",
    "stacklens.ingest.fields",
    "stacklens.ingest.grouping.blocks",
    "stacklens.ingest.grouping.v1",
    "stacklens.ingest.grouping.v2",
    "stacklens.ingest.transactions",
    "stacklens.ingest.timeparse",
    "stacklens.ingest.inp",
    "stacklens.ingest.useragent",
)


def stale_modules(root: Path) -> list[str]:
    """Compiled modules under ``root`` whose extension is older than their source.

    Python imports the extension before the source, so an edit to a compiled module's ``.py`` has no effect
    until the next build (``make``/``pip install -e .`` rebuilds).
    """
    stale = []
    for name in COMPILED_MODULES:
        source = root / (name.replace(".", "/") + ".py")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            built = source.with_suffix(suffix)
            if built.exists() and built.stat().st_mtime < source.stat().st_mtime:
                stale.append(name)
    return stale
