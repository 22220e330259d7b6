"""Which events may have a source map: an organization's releases and debug ids that have bundles.

Ingest asks this of every JavaScript error event before grouping it (:mod:`stacklens.sourcemaps.grouping`),
so an event without a map pays one set look-up. The index is plain data (frozensets) that pickles cheaply:
the ingest worker processes, which cannot open the warehouse, receive it with their batch and use it to tell
which lines the server process must group itself. Only the standard library is imported here, so a worker
loads none of the source-map decoding.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

JS_PLATFORMS = frozenset({"javascript", "node"})
_DEBUG_ID = re.compile(r"^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}(?:-?[0-9a-f]+)?$")


def normalize_debug_id(value: object) -> str:
    """Lower-case with dashes (``6799075f-65e7-…``); ``""`` when ``value`` is not a debug id."""
    if not isinstance(value, str):
        return ""
    text = value.strip().lower()
    if not _DEBUG_ID.match(text):
        return ""
    hexes = text.replace("-", "")[:32]
    return f"{hexes[:8]}-{hexes[8:12]}-{hexes[12:16]}-{hexes[16:20]}-{hexes[20:32]}"


def debug_images(payload: dict[str, Any]) -> dict[str, str]:
    """``{file URL: debug id}`` from the event's ``debug_meta.images`` of type ``sourcemap``."""
    meta = payload.get("debug_meta")
    images = meta.get("images") if isinstance(meta, dict) else None
    found: dict[str, str] = {}
    for image in images if isinstance(images, list) else []:
        if isinstance(image, dict) and image.get("type") == "sourcemap":
            debug_id = normalize_debug_id(image.get("debug_id"))
            if debug_id and isinstance(image.get("code_file"), str):
                found[image["code_file"]] = debug_id
    return found


@dataclass(frozen=True)
class ProjectMaps:
    """One project's uploads: its (release, dist) pairs and the debug ids of its maps."""

    releases: frozenset[tuple[str, str]] = frozenset()
    debug_ids: frozenset[str] = frozenset()


@dataclass(frozen=True)
class MapIndex:
    """An organization's uploads by project, as last read from the manifest (see
    :class:`stacklens.sourcemaps.manifest.Manifest` for how fresh)."""

    org_id: int
    projects: dict[int, ProjectMaps] = field(default_factory=dict)

    def matches(self, project_id: int, payload: dict[str, Any]) -> bool:
        """Whether a map may exist for this event: its release + dist has a bundle, or one of its
        ``debug_meta`` debug ids is a map's. A project without uploads answers after one look-up."""
        known = self.projects.get(project_id)
        if known is None or str(payload.get("platform") or "") not in JS_PLATFORMS:
            return False
        release = str(payload.get("release") or "")
        if release and (release, str(payload.get("dist") or "")) in known.releases:
            return True
        return bool(known.debug_ids) and not known.debug_ids.isdisjoint(debug_images(payload).values())
