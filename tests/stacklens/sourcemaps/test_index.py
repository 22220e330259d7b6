"""Whether a source map may exist for an event: its release and dist have a bundle, or a debug id matches."""

from __future__ import annotations

from stacklens.sourcemaps.index import MapIndex, ProjectMaps, debug_images, normalize_debug_id

DEBUG_ID = "6799075f-65e7-4bc0-8a2b-0f3d1c2b4a5e"


def test_debug_ids_are_normalised_or_refused() -> None:
    assert normalize_debug_id(DEBUG_ID.upper().replace("-", "")) == DEBUG_ID
    assert normalize_debug_id(f" {DEBUG_ID}-0 ") == DEBUG_ID
    assert [normalize_debug_id(v) for v in ("not-an-id", None, 42, "")] == ["", "", "", ""]


def test_the_events_source_map_images() -> None:
    payload = {
        "debug_meta": {
            "images": [
                {"type": "sourcemap", "code_file": "https://shop.example/app.js", "debug_id": DEBUG_ID},
                {"type": "sourcemap", "code_file": "https://shop.example/bad.js", "debug_id": "nope"},
                {"type": "macho", "code_file": "x", "debug_id": DEBUG_ID},
            ]
        }
    }
    assert debug_images(payload) == {"https://shop.example/app.js": DEBUG_ID}
    assert debug_images({"debug_meta": "broken"}) == {}


def test_matches_by_release_and_dist_or_by_debug_id() -> None:
    index = MapIndex(7, {1: ProjectMaps(frozenset({("shop@1.0", "")}), frozenset({DEBUG_ID}))})
    assert index.matches(1, {"platform": "javascript", "release": "shop@1.0"})
    assert not index.matches(1, {"platform": "javascript", "release": "shop@1.0", "dist": "b"})
    by_id = {
        "platform": "node",
        "debug_meta": {"images": [{"type": "sourcemap", "code_file": "a", "debug_id": DEBUG_ID}]},
    }
    assert index.matches(1, by_id)
    assert not index.matches(1, {"platform": "python", "release": "shop@1.0"})
    assert not index.matches(2, {"platform": "javascript", "release": "shop@1.0"})
