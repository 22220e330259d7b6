"""One parsed source map, and the process-wide cache of parsed maps.

Maps are decoded by ``symbolic`` (Sentry's Rust symbolication library, the one its own processing uses):
a 7 MB map parses in about 0.25 s, where the pure-Python ``ecma426`` took 16 s (bench/sourcemaps.py), and
its lookup resolves a frame's original function name from the minified file's scopes. Maps are cached by
the SHA-1 of their content: content-addressed, so an entry is never stale and a re-upload reuses it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from symbolic.exceptions import SymbolicError
from symbolic.sourcemap import SourceMapView, SourceView

from stacklens.errors import InvalidInput
from stacklens.ingest import jsondepth


@dataclass(frozen=True)
class Original:
    source: str
    line: int  # 1-based, like frames
    column: int  # 1-based
    name: str  # the name at the position (a call site names its callee)
    function: str  # the enclosing function's original name, when the minified file was given


# Resolved positions kept per map: a page shown again (or another event of the same issue, whose frames sit at
# the same positions) answers from here instead of scanning the minified file's scopes again.
MEMO_ENTRIES = 20_000


@dataclass
class SourceMap:
    file: str
    view: Any  # symbolic.SourceMapView
    last_line: int  # the number of generated lines the map covers (0-based index of the last)
    size: int
    memo: dict[tuple[int, int, str, bool], Original | None] = field(default_factory=dict)
    texts: dict[str, list[str] | None] = field(default_factory=dict)

    def lookup(self, line: int, column: int, function: str = "", minified: Any = None) -> Original | None:
        """The original position of a 1-based generated ``line``/``column``; ``None`` where nothing maps.
        With the minified file (a ``SourceView``) and the frame's minified ``function`` name, the original
        name of the enclosing function is resolved too."""
        key = (line, column, function, minified is not None)
        if key in self.memo:
            return self.memo[key]
        found = self._lookup(line, column, function, minified)
        if len(self.memo) >= MEMO_ENTRIES:
            self.memo.clear()
        self.memo[key] = found
        return found

    def _lookup(self, line: int, column: int, function: str, minified: Any) -> Original | None:
        try:
            token = self.view.lookup(line - 1, max(column - 1, 0), function or None, minified)
        except SymbolicError:
            return None
        # symbolic falls back to an earlier line's last token; a frame on an unmapped line is unmapped.
        if token is None or token.dst_line != line - 1 or not token.src:
            return None
        return Original(
            token.src, token.src_line + 1, token.src_col + 1, token.name or "", token.function_name or ""
        )

    def source_lines(self, source: str) -> list[str] | None:
        """The original file's lines from ``sourcesContent``, when the map carries them (split once)."""
        if source not in self.texts:
            self.texts[source] = None
            for index in range(self.view.source_count):
                if self.view.get_source_name(index) == source:
                    text = self.view.get_source_contents(index)
                    self.texts[source] = text.splitlines() if isinstance(text, str) else None
                    break
        return self.texts[source]


def parse_map(data: bytes) -> SourceMap:
    """Decode a source map; :class:`InvalidInput` says why a map is unusable (JSON, shape, VLQ, indices)."""
    try:
        obj = jsondepth.loads(data.decode("utf-8-sig").removeprefix(")]}'\n"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"not JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise InvalidInput("not a JSON object")
    if obj.get("version") != 3:
        raise InvalidInput(f"`version` is {obj.get('version')!r}, expected 3")
    if "sections" not in obj:
        if not isinstance(obj.get("mappings"), str):
            raise InvalidInput("`mappings` is missing or not a string")
        if not isinstance(obj.get("sources"), list):
            raise InvalidInput("`sources` is missing or not a list")
    try:
        view = SourceMapView.from_json_bytes(data)
    except SymbolicError as exc:
        raise InvalidInput(f"it does not decode ({exc})") from exc
    raw_mappings = obj.get("mappings")
    mappings = raw_mappings if isinstance(raw_mappings, str) else ""
    file = obj.get("file")
    return SourceMap(
        file=file if isinstance(file, str) else "",
        view=view,
        last_line=mappings.rstrip(";").count(";"),
        size=len(data),
    )


def parse_minified(data: bytes) -> Any:
    """The minified file as symbolic reads it, for resolving original function names."""
    return SourceView.from_bytes(data)


class MapCache:
    """Parsed maps and minified files by content SHA-1, least recently used dropped beyond ``max_bytes`` of
    their text (the parsed form is about as large)."""

    def __init__(self, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, Any] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, sha1: str) -> Any:
        with self._lock:
            found = self._items.get(sha1)
            if found is None:
                return None
            self._items.move_to_end(sha1)
            return found[0]

    def put(self, sha1: str, parsed: Any, size: int) -> None:
        with self._lock:
            if sha1 in self._items:
                return
            self._items[sha1] = (parsed, size)
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped
