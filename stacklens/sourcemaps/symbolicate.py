"""Apply uploaded source maps to an event's JavaScript frames when its page is shown.

Matching, in order (the first that finds a map wins, and the frame says which one did):

1. **debug id** — the event's ``debug_meta.images`` (``{"type": "sourcemap", "code_file": <url>,
   "debug_id": …}``, which @sentry/browser fills from the ``//# debugId=`` comment) names the frame's file;
   the map uploaded with that debug id is used, whatever its release.
2. **release + dist + URL** — among the files of the event's release and dist: the frame's full URL, then
   ``~/<path>`` (any host), then the path with leading directories dropped (``~/static/js/app.js``,
   ``~/js/app.js``, ``~/app.js``); the minified file's ``sourcemap`` header or ``//# sourceMappingURL``
   names its map. A bare file name alone never matches: two releases' ``main.js`` are not confused.

A frame that stays minified carries the reason: the event has no release, no bundle for this release, no
map for this URL, the debug id is unknown, or the map has no mapping at that line and column.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from clickhouse_connect.driver.client import Client

from stacklens.errors import InvalidInput
from stacklens.issues.payload_exceptions import ExceptionView, FrameView
from stacklens.sourcemaps import store
from stacklens.sourcemaps.bundle import join_url, source_mapping_url
from stacklens.sourcemaps.index import JS_PLATFORMS, debug_images
from stacklens.sourcemaps.manifest import Manifest, manifest_for
from stacklens.sourcemaps.sourcemap import MapCache, Original, SourceMap, parse_map, parse_minified

CONTEXT_LINES = 5
_VENDOR = re.compile(r"(^|/)(node_modules|bower_components|~)/|^webpack/(bootstrap|runtime)|^\(webpack\)")
# The process-wide cache of parsed maps (content-addressed, so never stale).
DEFAULT_CACHE = MapCache()


@dataclass
class Resolver:
    client: Client
    org_id: int
    project_id: int
    cache: MapCache = DEFAULT_CACHE
    # The manifest rows' cache; ``None`` is the process's one for ``client`` (manifest.manifest_for).
    manifest: Manifest | None = None


def url_candidates(url: str) -> list[str]:
    """The manifest URLs a frame's file may have been uploaded under, most specific first."""
    parts = urlsplit(url)
    path = parts.path if parts.scheme else url.split("?", 1)[0]
    out = [url, url.split("?", 1)[0]]
    segments = [s for s in path.split("/") if s]
    for start in range(len(segments)):
        out.append("~/" + "/".join(segments[start:]))
    return list(dict.fromkeys(out))


def original_path(source: str) -> str:
    """A readable path for the original file: bundler prefixes and leading ``../`` removed."""
    path = re.sub(r"^webpack://[^/]*/", "", source)
    path = re.sub(r"^[a-z]+://", "", path)
    while path.startswith(("../", "./")):
        path = path.split("/", 1)[1]
    return posixpath.normpath(path) if path else source


class _EventMaps:
    """Finds and parses the maps of one event's files (manifest rows from the process's cache)."""

    def __init__(self, resolver: Resolver, payload: dict[str, Any]) -> None:
        self.resolver = resolver
        self.images = debug_images(payload)
        self.release = str(payload.get("release") or "")
        self.dist = str(payload.get("dist") or "")
        manifest = resolver.manifest or manifest_for(resolver.client)
        self.files = manifest.candidate_files(
            resolver.org_id,
            resolver.project_id,
            self.release,
            self.dist,
            sorted(set(self.images.values())),
        )
        self._found: dict[str, tuple[SourceMap | None, str]] = {}
        self._minified: dict[str, store.StoredFile] = {}

    def map_for(self, url: str) -> tuple[SourceMap | None, str]:
        """The parsed map of ``url`` and how it was found, or ``None`` and why not."""
        if url not in self._found:
            self._found[url] = self._find(url)
        return self._found[url]

    def minified(self, url: str) -> Any:
        """The uploaded minified file of ``url`` (when it came beside its map), parsed for scope names."""
        found = self._minified.get(url)
        if found is None:
            return None
        cache = self.resolver.cache
        parsed = cache.get(found.sha1)
        if parsed is None:
            blobs = store.get_blobs(self.resolver.client, self.resolver.org_id, store.FILE, [found.sha1])
            if found.sha1 not in blobs:
                return None
            parsed = parse_minified(blobs[found.sha1])
            cache.put(found.sha1, parsed, found.size)
        return parsed

    def _find(self, url: str) -> tuple[SourceMap | None, str]:
        debug_id = self.images.get(url) or self.images.get(url.split("?", 1)[0], "")
        if debug_id:
            by_id = [f for f in self.files if f.debug_id == debug_id and f.file_type == "source_map"]
            if by_id:
                scripts = [
                    f for f in self.files if f.debug_id == debug_id and f.file_type == "minified_source"
                ]
                if scripts:
                    self._minified[url] = scripts[0]
                return self._parsed(by_id[0], f"debug id {debug_id}")
        release_files = [f for f in self.files if self.release and f.release == self.release]
        release_files = [f for f in release_files if f.dist == self.dist]
        if not release_files:
            if debug_id:
                return None, f"debug id {debug_id} unknown: no uploaded map has it"
            if not self.release:
                return None, "the event has no release and its file has no debug id"
            dist = f" (dist {self.dist})" if self.dist else ""
            return None, f"no bundle for release {self.release}{dist}"
        by_url = {f.url: f for f in release_files}
        for candidate in url_candidates(url):
            minified = by_url.get(candidate)
            if minified is not None and minified.file_type != "source_map":
                ref = minified.sourcemap or self._map_comment(minified)
                target = by_url.get(join_url(minified.url, ref)) if ref else None
                if target is not None:
                    self._minified[url] = minified
                    return self._parsed(target, f"release {self.release}, {minified.url}")
            sibling = by_url.get(candidate + ".map")
            if sibling is not None:
                return self._parsed(sibling, f"release {self.release}, {sibling.url}")
        prefix = f"debug id {debug_id} unknown; " if debug_id else ""
        return None, f"{prefix}no map for {url.split('?', 1)[0]} in release {self.release}"

    def _map_comment(self, minified: store.StoredFile) -> str:
        # Kept in the content-addressed cache too, so a cached event reads no blob for it.
        key = "sourceMappingURL:" + minified.sha1
        found = self.resolver.cache.get(key)
        if found is None:
            blobs = store.get_blobs(self.resolver.client, self.resolver.org_id, store.FILE, [minified.sha1])
            if minified.sha1 not in blobs:
                return ""
            found = source_mapping_url(blobs[minified.sha1])
            self.resolver.cache.put(key, found, len(found) + 64)
        return str(found)

    def _parsed(self, found: store.StoredFile, how: str) -> tuple[SourceMap | None, str]:
        cache = self.resolver.cache
        parsed = cache.get(found.sha1)
        if parsed is None:
            blobs = store.get_blobs(self.resolver.client, self.resolver.org_id, store.FILE, [found.sha1])
            if found.sha1 not in blobs:
                return None, f"the map {found.url} was deleted"
            try:
                parsed = parse_map(blobs[found.sha1])
            except InvalidInput as exc:
                return None, f"the map {found.url} cannot be read: {exc}"
            cache.put(found.sha1, parsed, found.size)
        return parsed, how


def _lookup(maps: _EventMaps, frame: Mapping[str, Any]) -> tuple[SourceMap | None, Original | None, str]:
    url = frame.get("abs_path") or frame.get("filename") or ""
    if not url or frame.get("lineno") is None:
        return None, None, "the frame has no file and line"
    parsed, how = maps.map_for(url)
    if parsed is None:
        return None, None, how
    minified_name = str(frame.get("function") or "").rsplit(".", 1)[-1]
    minified_name = "" if minified_name in ("?", "<anonymous>") else minified_name
    original = parsed.lookup(
        int(frame["lineno"]), int(frame.get("colno") or 1), minified_name, maps.minified(url)
    )
    if original is None:
        where = f"line {frame['lineno']}, column {frame.get('colno') or '?'}"
        return parsed, None, f"the map ({how}) has no mapping at {where}"
    return parsed, original, how


@dataclass(frozen=True)
class Resolved:
    """One frame's answer: its map and original position with the function's original name (``""`` when
    the map has none), or ``original`` ``None`` and the reason in ``how``."""

    parsed: SourceMap | None
    original: Original | None
    name: str
    how: str


def resolve_frames(
    resolver: Resolver, payload: dict[str, Any], frames: list[dict[str, Any]]
) -> list[Resolved | None]:
    """Each of ``frames`` (one stack, top first) looked up in the event's maps; ``None`` for a frame without a
    column (not from a minified script). Nothing is changed."""
    return _resolve(_EventMaps(resolver, payload), frames)


def _resolve(maps: _EventMaps, frames: Sequence[Mapping[str, Any]]) -> list[Resolved | None]:
    looked = [_lookup(maps, f) if f.get("colno") is not None else None for f in frames]
    answers: list[Resolved | None] = []
    for i, result in enumerate(looked):
        if result is None:
            answers.append(None)
            continue
        parsed, original, how = result
        name = ""
        if parsed is not None and original is not None:
            # The frame's own function: symbolic's answer from the minified file's scopes; else the name at
            # its caller's call site (the frame below, top first).
            caller = looked[i + 1] if i + 1 < len(looked) else None
            name = original.function
            if not name and caller and caller[1] and caller[1].name:
                name = caller[1].name
        answers.append(Resolved(parsed, original, name, how))
    return answers


def symbolicate(resolver: Resolver, payload: dict[str, Any], chain: list[ExceptionView]) -> int:
    """Rewrite the JavaScript frames of ``chain`` (the page's exceptions, frames top first) to their original
    file, line, column, function and context; return how many frames were mapped."""
    if str(payload.get("platform") or "") not in JS_PLATFORMS:
        return 0
    if not any(f.get("colno") is not None for exc in chain for f in exc["frames"]):
        return 0
    maps = _EventMaps(resolver, payload)
    mapped = 0
    for exc in chain:
        for frame, answer in zip(exc["frames"], _resolve(maps, exc["frames"]), strict=True):
            if answer is None:
                continue
            if answer.parsed is None or answer.original is None:
                frame["sourcemap_note"] = answer.how
                continue
            # Without an original name the frame keeps the name the browser reported.
            _apply(frame, answer.parsed, answer.original, answer.name, answer.how)
            mapped += 1
    return mapped


def original_path_in_app(path: str) -> bool:
    """In-app from the original path: ``node_modules`` and bundler runtime files are vendor frames."""
    return not _VENDOR.search(path)


def context_line(parsed: SourceMap, original: Original) -> str | None:
    lines = parsed.source_lines(original.source)
    return lines[original.line - 1] if lines and 0 < original.line <= len(lines) else None


def _apply(frame: FrameView, parsed: SourceMap, original: Original, name: str, how: str) -> None:
    path = original_path(original.source)
    frame["minified"] = f"{frame['filename']}:{frame['lineno']}:{frame.get('colno')}"
    frame["minified_function"] = frame["function"]
    frame["sourcemap_via"] = how
    frame["filename"] = path
    frame["abs_path"] = path
    frame["lineno"] = original.line
    frame["colno"] = original.column
    if name:
        frame["function"] = name
    frame["in_app"] = original_path_in_app(path)
    lines = parsed.source_lines(original.source)
    if lines and 0 < original.line <= len(lines):
        at = original.line - 1
        frame["pre_context"] = lines[max(0, at - CONTEXT_LINES) : at]
        frame["context_line"] = lines[at]
        frame["post_context"] = lines[at + 1 : at + 1 + CONTEXT_LINES]
