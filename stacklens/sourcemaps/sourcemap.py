"""One parsed source map, held compactly, and the process-wide cache of parsed maps.

``ecma426`` decodes the ``mappings`` string; the tokens are then packed per generated line into ``array``
columns (about 20 bytes a token instead of a Python object each), so a 5 MB map (about a million tokens)
stays around 25 MB in the cache and a lookup is one bisect. Maps are cached by the SHA-1 of their content:
content-addressed, so an entry is never stale and a re-upload of the same map reuses it.
"""

from __future__ import annotations

import json
import threading
from array import array
from bisect import bisect_right
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ecma426 import codec

from stacklens.errors import InvalidInput


@dataclass(frozen=True)
class Original:
    source: str
    line: int  # 1-based, like frames
    column: int  # 1-based
    name: str


@dataclass
class SourceMap:
    file: str
    sources: list[str]
    names: list[str]
    contents: list[str | None]
    last_line: int = -1  # the last generated line (0-based) that has a mapping
    # Per generated line: columns, and per token the source index (-1: unmapped), line, column, name (-1).
    lines: dict[int, tuple[array, array, array, array, array]] = field(default_factory=dict)
    size: int = 0

    def lookup(self, line: int, column: int) -> Original | None:
        """The original position of a 1-based generated ``line``/``column`` (nearest mapping at or left of
        the column on that line, as browsers' devtools do); ``None`` where nothing maps."""
        packed = self.lines.get(line - 1)
        if packed is None:
            return None
        cols, srcs, olines, ocols, names = packed
        i = bisect_right(cols, max(column - 1, 0))
        if i == 0 or srcs[i - 1] < 0:
            return None
        name = self.names[names[i - 1]] if names[i - 1] >= 0 else ""
        return Original(self.sources[srcs[i - 1]], olines[i - 1] + 1, ocols[i - 1] + 1, name)

    def source_lines(self, source: str) -> list[str] | None:
        """The original file's lines from ``sourcesContent``, when the map carries them."""
        try:
            text = self.contents[self.sources.index(source)]
        except (ValueError, IndexError):
            return None
        return text.splitlines() if isinstance(text, str) else None


def parse_map(data: bytes) -> SourceMap:
    """Decode a source map; :class:`InvalidInput` says why a map is unusable (JSON, shape, VLQ, indices)."""
    try:
        text = data.decode("utf-8-sig")
        if text.startswith(")]}"):  # the XSSI guard some servers put in front
            text = text.split("\n", 1)[1] if "\n" in text else ""
        obj = json.loads(text)
    except (UnicodeDecodeError, ValueError) as exc:
        raise InvalidInput(f"not JSON ({exc})") from exc
    if not isinstance(obj, dict):
        raise InvalidInput("not a JSON object")
    if "sections" in obj:
        raise InvalidInput(
            "index maps (`sections`) are not supported; upload the flat map your bundler writes"
        )
    if obj.get("version") != 3:
        raise InvalidInput(f"`version` is {obj.get('version')!r}, expected 3")
    if not isinstance(obj.get("mappings"), str):
        raise InvalidInput("`mappings` is missing or not a string")
    root = obj.get("sourceRoot") if isinstance(obj.get("sourceRoot"), str) else ""
    raw_sources = obj.get("sources")
    if not isinstance(raw_sources, list):
        raise InvalidInput("`sources` is missing or not a list")
    sources = [
        (root.rstrip("/") + "/" + s if root and s else s) if isinstance(s, str) else "" for s in raw_sources
    ]
    raw_contents, raw_names, raw_file = obj.get("sourcesContent"), obj.get("names"), obj.get("file")
    contents: list[Any] = raw_contents if isinstance(raw_contents, list) else []
    names: list[str] = raw_names if isinstance(raw_names, list) else []
    if not all(isinstance(n, str) for n in names):
        raise InvalidInput("`names` must be a list of strings")
    try:
        tokens = codec.decode_mappings(obj["mappings"], sources, names)
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise InvalidInput(f"its `mappings` do not decode ({exc})") from exc
    parsed = SourceMap(
        file=raw_file if isinstance(raw_file, str) else "",
        sources=sources,
        names=names,
        contents=[c if isinstance(c, str) else None for c in contents],
        size=len(data),
    )
    source_index = {s: i for i, s in enumerate(sources)}
    name_index = {n: i for i, n in enumerate(names)}
    current: tuple[array, array, array, array, array] | None = None
    current_line = -1
    for token in tokens:
        if token.generated_line != current_line:
            current_line = token.generated_line
            current = parsed.lines.setdefault(
                current_line, (array("i"), array("i"), array("i"), array("i"), array("i"))
            )
        assert current is not None
        current[0].append(token.generated_column)
        current[1].append(source_index.get(token.source, -1) if token.source else -1)
        current[2].append(token.original_line)
        current[3].append(token.original_column)
        current[4].append(name_index.get(token.name, -1) if token.name is not None else -1)
        parsed.last_line = max(parsed.last_line, current_line)
    return parsed


class MapCache:
    """Parsed maps by content SHA-1, least recently used dropped beyond ``max_bytes`` of map text."""

    def __init__(self, max_bytes: int = 256 * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self._items: OrderedDict[str, SourceMap] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, sha1: str) -> SourceMap | None:
        with self._lock:
            found = self._items.get(sha1)
            if found is not None:
                self._items.move_to_end(sha1)
            return found

    def put(self, sha1: str, parsed: SourceMap) -> None:
        with self._lock:
            if sha1 in self._items:
                return
            self._items[sha1] = parsed
            self._bytes += parsed.size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, dropped = self._items.popitem(last=False)
                self._bytes -= dropped.size
