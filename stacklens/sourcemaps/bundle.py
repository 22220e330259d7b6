"""Artifact bundles: the zip that sentry-cli (and ``stacklens sourcemaps upload``) sends, read and checked.

A bundle is a zip archive (sentry-cli puts a ``SYSB`` header in front, which zip readers skip) holding
``manifest.json`` and the files it lists::

    {"files": {"files/_/_/app.min.js": {"type": "minified_source", "url": "~/app.min.js",
               "headers": {"debug-id": "…", "sourcemap": "app.min.js.map"}}, …},
     "release": "web@1.0", "dist": "d1", "debug_id": "<bundle id>"}

Every file is checked before anything is stored: a map must be JSON that decodes as an ECMA-426 source map,
and it must belong to its minified file (same debug id, the ``file`` it names, no mapping below the file's
last line). A bundle that fails any check is refused whole, naming the file and the reason.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from dataclasses import dataclass, field

from stacklens.errors import InvalidInput, TooLarge
from stacklens.ingest import jsondepth
from stacklens.sourcemaps.index import normalize_debug_id
from stacklens.sourcemaps.sourcemap import SourceMap, parse_map

# 8 MiB chunks (a power of two, as sentry-cli requires), 32 MiB per request, 256 MiB per bundle: a large
# single-page app's maps are 20–60 MB; the bundle ceiling keeps one upload from filling the warehouse.
CHUNK_SIZE = 8 * 1024 * 1024
MAX_REQUEST_SIZE = 32 * 1024 * 1024
MAX_BUNDLE_SIZE = 256 * 1024 * 1024
MAX_FILES = 10_000
FILE_TYPES = ("minified_source", "source_map", "source", "indexed_ram_bundle")
_DEBUG_ID_COMMENT = re.compile(rb"//# debugId=([0-9A-Fa-f-]{32,40})\s*$", re.MULTILINE)
_MAP_COMMENT = re.compile(rb"//[#@] sourceMappingURL=(\S+)\s*$", re.MULTILINE)


class BundleError(InvalidInput):
    """The bundle (or one of its files) cannot be stored; the message names the file."""


@dataclass(frozen=True)
class BundleFile:
    url: str  # "~/static/app.min.js" or an absolute URL
    file_type: str
    content: bytes
    debug_id: str = ""
    sourcemap: str = ""  # the minified file's reference to its map, as written


@dataclass
class Bundle:
    release: str
    dist: str
    files: list[BundleFile] = field(default_factory=list)


def debug_id_comment(source: bytes) -> str:
    """The ``//# debugId=`` comment sentry-cli and bundler plugins add to a minified file (the last one)."""
    found = _DEBUG_ID_COMMENT.findall(source[-4096:])
    return normalize_debug_id(found[-1].decode()) if found else ""


def source_mapping_url(source: bytes) -> str:
    """The file's ``//# sourceMappingURL=`` (the last one), or ``""``."""
    found = _MAP_COMMENT.findall(source[-4096:])
    return found[-1].decode(errors="replace") if found else ""


def read_bundle(data: bytes, release: str = "", dist: str = "") -> Bundle:
    """Parse and check an artifact bundle; ``release``/``dist`` from the request win over the manifest's."""
    if len(data) > MAX_BUNDLE_SIZE:
        raise TooLarge(f"the bundle is {len(data):,} bytes; at most {MAX_BUNDLE_SIZE:,} are accepted")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        manifest = jsondepth.loads(archive.read("manifest.json"))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise BundleError(f"the bundle is not a zip archive with a manifest.json ({exc})") from exc
    entries = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise BundleError("manifest.json lists no files (its `files` object is missing or empty)")
    if len(entries) > MAX_FILES:
        raise TooLarge(f"the bundle lists {len(entries):,} files; at most {MAX_FILES:,} are accepted")
    bundle = Bundle(
        release=str(release or manifest.get("release") or ""), dist=str(dist or manifest.get("dist") or "")
    )
    for path, info in entries.items():
        if not isinstance(info, dict) or not isinstance(info.get("url"), str) or not info["url"]:
            raise BundleError(f"manifest.json entry {path!r} has no `url`")
        headers = {str(k).lower(): v for k, v in (info.get("headers") or {}).items()}
        try:
            content = archive.read(path)
        except KeyError as exc:
            raise BundleError(f"manifest.json lists {path!r}, which is not in the archive") from exc
        file_type = str(info.get("type") or "")
        if file_type not in FILE_TYPES:
            file_type = guess_type(info["url"], content)
        bundle.files.append(
            BundleFile(
                url=info["url"],
                file_type=file_type,
                content=content,
                debug_id=normalize_debug_id(headers.get("debug-id")),
                sourcemap=str(headers.get("sourcemap") or headers.get("x-sourcemap") or ""),
            )
        )
    check_bundle(bundle)
    return bundle


def guess_type(url: str, content: bytes) -> str:
    if url.endswith(".map") or (content.lstrip()[:1] == b"{" and b'"mappings"' in content[:4096]):
        return "source_map"
    return "minified_source" if url.endswith((".js", ".mjs", ".cjs")) else "source"


def check_bundle(bundle: Bundle) -> None:
    """Every map parses and belongs to the minified file that points at it; raises :class:`BundleError`."""
    by_url = {f.url: f for f in bundle.files}
    maps: dict[str, SourceMap] = {}
    for item in bundle.files:
        if item.file_type == "source_map":
            try:
                maps[item.url] = parse_map(item.content)
            except InvalidInput as exc:
                raise BundleError(f"{display(item.url)} is not a valid source map: {exc}") from exc
    for item in bundle.files:
        if item.file_type != "minified_source":
            continue
        ref = item.sourcemap or source_mapping_url(item.content)
        if not ref or ref.startswith("data:"):
            continue
        target = by_url.get(join_url(item.url, ref))
        if target is None or target.url not in maps:
            continue  # the map may come in another bundle; matching will say so if it never does
        check_pair(item, target, maps[target.url])


def check_pair(minified: BundleFile, map_file: BundleFile, parsed: SourceMap) -> None:
    """Refuse a map that was made for another file."""
    name = display(minified.url)
    own_id = minified.debug_id or debug_id_comment(minified.content)
    if own_id and map_file.debug_id and own_id != map_file.debug_id:
        raise BundleError(
            f"{display(map_file.url)} is a map for another file: its debug id {map_file.debug_id} "
            f"is not {name}'s ({own_id})"
        )
    if parsed.file and posixpath.basename(parsed.file) != posixpath.basename(minified.url.split("?")[0]):
        raise BundleError(
            f"{display(map_file.url)} is a map for another file: it names {parsed.file!r}, not {name}"
        )
    lines = minified.content.count(b"\n") + 1
    if parsed.last_line >= lines:
        raise BundleError(
            f"{display(map_file.url)} is a map for another file: it maps line {parsed.last_line + 1} "
            f"but {name} has {lines} lines"
        )


def join_url(base: str, ref: str) -> str:
    """``ref`` (a map reference) resolved against the URL of the file that carries it."""
    if "://" in ref or ref.startswith("~/"):
        return ref
    head, _, _ = base.split("?", 1)[0].rpartition("/")
    joined = posixpath.normpath(f"{head}/{ref}") if head else ref
    if base.startswith("~/") and not joined.startswith("~/"):
        return "~/" + joined.lstrip("~/")
    if "://" in base:
        scheme, rest = base.split("://", 1)
        host, _, path = rest.partition("/")
        return f"{scheme}://{host}/" + posixpath.normpath(f"/{path.rpartition('/')[0]}/{ref}").lstrip("/")
    return joined


def display(url: str) -> str:
    return url.split("?", 1)[0]
