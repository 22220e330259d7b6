"""Pack minified files and their maps into an artifact bundle, the same zip sentry-cli uploads.

``stacklens sourcemaps upload`` uses this, so both tools store identical bundles. Files are named
``<url prefix><path relative to the folder given>`` (``~/static/app.min.js`` for ``dist/static/app.min.js``
with ``dist`` given); a file's debug id comes from its ``//# debugId=`` comment (a map: its ``debugId`` or
``debug_id`` field). The archive is deterministic (fixed times, sorted names), so uploading the same build
twice is recognised by its checksum and stored once.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

from stacklens.errors import InvalidInput
from stacklens.ingest import jsondepth
from stacklens.sourcemaps.bundle import (
    Bundle,
    BundleFile,
    check_bundle,
    debug_id_comment,
    source_mapping_url,
)
from stacklens.sourcemaps.index import normalize_debug_id

SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs")
ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def collect(paths: list[Path], url_prefix: str = "~/") -> list[tuple[str, Path]]:
    """``(url, file)`` for every script and map under ``paths`` (files or folders)."""
    prefix = url_prefix if url_prefix.endswith("/") else url_prefix + "/"
    found: dict[str, Path] = {}
    for root in paths:
        if not root.exists():
            raise InvalidInput(f"{root}: no such file or folder")
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for path in files:
            if path.suffix in SCRIPT_SUFFIXES or path.name.endswith(".map"):
                relative = path.name if root.is_file() else path.relative_to(root).as_posix()
                found[prefix + relative] = path
    if not found:
        raise InvalidInput(f"no .js or .map files under {', '.join(str(p) for p in paths)}")
    return sorted(found.items())


def bundle_of(paths: list[Path], release: str, dist: str = "", url_prefix: str = "~/") -> Bundle:
    bundle = Bundle(release=release, dist=dist)
    for url, path in collect(paths, url_prefix):
        content = path.read_bytes()
        if url.endswith(".map"):
            debug_id = ""
            try:
                obj = jsondepth.loads(content)
                if isinstance(obj, dict):
                    debug_id = normalize_debug_id(obj.get("debugId") or obj.get("debug_id"))
            except ValueError:
                pass  # check_bundle names the file
            bundle.files.append(BundleFile(url, "source_map", content, debug_id))
        else:
            ref = source_mapping_url(content)
            bundle.files.append(
                BundleFile(
                    url,
                    "minified_source",
                    content,
                    debug_id_comment(content),
                    "" if ref.startswith("data:") else ref,
                )
            )
    check_bundle(bundle)
    return bundle


def pack(bundle: Bundle, org: str = "", project: str = "") -> bytes:
    """The bundle as a zip with ``manifest.json`` (sentry-cli's layout)."""
    files: dict[str, dict[str, object]] = {}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for item in bundle.files:
            name = "files/" + item.url.replace("~/", "_/_/", 1).replace("://", "/")
            headers = {k: v for k, v in (("debug-id", item.debug_id), ("sourcemap", item.sourcemap)) if v}
            files[name] = {"type": item.file_type, "url": item.url, "headers": headers}
            archive.writestr(zipfile.ZipInfo(name, ZIP_TIME), item.content, zipfile.ZIP_DEFLATED)
        manifest = {
            "files": files,
            "org": org,
            "project": project,
            "release": bundle.release,
            "dist": bundle.dist,
        }
        archive.writestr(
            zipfile.ZipInfo("manifest.json", ZIP_TIME),
            json.dumps(manifest, sort_keys=True),
            zipfile.ZIP_DEFLATED,
        )
    return buffer.getvalue()
