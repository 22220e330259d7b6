"""Source-map storage in the warehouse: content-addressed blobs and the bundle manifest (docs/architecture.md
§2).

``sourcemap_blobs`` holds upload chunks and files by (organization, kind, SHA-1); ``sourcemap_files`` is the
manifest, one row per file of a bundle. A bundle becomes visible only when its manifest rows land, in one
insert after every blob is stored: a refused or interrupted upload leaves no half bundle (at most blobs
nothing points at, which the next upload of the same content reuses).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clickhouse_connect.driver.client import Client

from stacklens.sourcemaps.bundle import Bundle
from stacklens.sourcemaps.index import MapIndex, ProjectMaps
from stacklens.warehouse.queries import load_query

CHUNK = "chunk"
FILE = "file"
FILE_COLUMNS = [
    "org_id",
    "project_id",
    "bundle_id",
    "release",
    "dist",
    "url",
    "file_type",
    "debug_id",
    "sourcemap",
    "sha1",
    "size",
    "uploaded_at",
]


# Bumped per organization by every upload and delete in this process, so the process's manifest caches
# (:mod:`stacklens.sourcemaps.manifest`) drop what they hold at once; other processes wait for their TTL.
_generations: dict[int, int] = {}
_generations_lock = threading.Lock()


def generation(org_id: int) -> int:
    """How many uploads and deletes of the organization's bundles this process has made."""
    return _generations.get(org_id, 0)


def _changed(org_id: int) -> None:
    with _generations_lock:
        _generations[org_id] = _generations.get(org_id, 0) + 1


@dataclass(frozen=True)
class StoredFile:
    bundle_id: str
    release: str
    dist: str
    url: str
    file_type: str
    debug_id: str
    sourcemap: str
    sha1: str
    size: int
    uploaded_at: datetime


def sha1_hex(data: bytes) -> str:
    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


def present(client: Client, org_id: int, kind: str, sha1s: Iterable[str]) -> set[str]:
    wanted = sorted(set(sha1s))
    if not wanted:
        return set()
    rows = client.query(
        load_query("sourcemaps/present_blobs"),
        parameters={"org": org_id, "kind": kind, "wanted": wanted},
    ).result_rows
    return {row[0] for row in rows}


def put_blobs(client: Client, org_id: int, kind: str, blobs: dict[str, bytes]) -> None:
    """Store ``{sha1: content}``; the caller has checked each SHA-1 (the key is trusted here)."""
    if not blobs:
        return
    now = datetime.now(UTC)
    rows = [[org_id, sha1, kind, len(body), body, now] for sha1, body in blobs.items()]
    client.insert(
        "sourcemap_blobs", rows, column_names=["org_id", "sha1", "kind", "size", "body", "created_at"]
    )


def get_blobs(client: Client, org_id: int, kind: str, sha1s: Iterable[str]) -> dict[str, bytes]:
    wanted = sorted(set(sha1s))
    if not wanted:
        return {}
    result = client.query(
        load_query("sourcemaps/blobs"),
        parameters={"org": org_id, "kind": kind, "wanted": wanted},
        column_formats={"any(body)": "bytes"},
    )
    return {sha1: bytes(body) for sha1, body in result.result_rows}


def has_bundle(client: Client, org_id: int, project_id: int, bundle_id: str) -> bool:
    rows = client.query(
        load_query("sourcemaps/bundle_exists"),
        parameters={"org": org_id, "project": project_id, "bundle": bundle_id},
    ).result_rows
    return bool(rows[0][0])


def put_bundle(client: Client, org_id: int, project_ids: list[int], bundle_id: str, bundle: Bundle) -> None:
    """Store the files' contents, then the manifest rows of every project in one insert."""
    put_blobs(client, org_id, FILE, {sha1_hex(f.content): f.content for f in bundle.files})
    now = datetime.now(UTC)
    rows: list[list[Any]] = []
    for project_id in project_ids:
        for item in bundle.files:
            rows.append(
                [
                    org_id,
                    project_id,
                    bundle_id,
                    bundle.release,
                    bundle.dist,
                    item.url,
                    item.file_type,
                    item.debug_id,
                    item.sourcemap,
                    sha1_hex(item.content),
                    len(item.content),
                    now,
                ]
            )
    client.insert("sourcemap_files", rows, column_names=FILE_COLUMNS)
    _changed(org_id)


def _files(client: Client, query: str, parameters: dict[str, Any]) -> list[StoredFile]:
    """The manifest rows ``queries/sourcemaps/<query>.sql`` finds, newest upload first."""
    rows = client.query(load_query(f"sourcemaps/{query}"), parameters=parameters).result_rows
    return [
        StoredFile(str(b), str(r), str(d), str(u), str(t), str(i), str(m), str(h), int(z), w)
        for b, r, d, u, t, i, m, h, z, w in rows
    ]


def project_files(client: Client, org_id: int, project_id: int) -> list[StoredFile]:
    """Every stored file of the project, newest upload first."""
    return _files(client, "project_files", {"org": org_id, "project": project_id})


def candidate_files(
    client: Client, org_id: int, project_id: int, release: str, dist: str, debug_ids: list[str]
) -> list[StoredFile]:
    """The files matching can use for one event: those with one of its debug ids, and those of its release
    and dist (one query per event, newest first so a re-upload wins)."""
    return _files(
        client,
        "candidate_files",
        {"org": org_id, "project": project_id, "ids": debug_ids, "release": release, "dist": dist},
    )


def release_files(client: Client, org_id: int, project_id: int, release: str, dist: str) -> list[StoredFile]:
    """The files uploaded for one release and dist of the project, newest first."""
    return _files(
        client,
        "release_files",
        {"org": org_id, "project": project_id, "release": release, "dist": dist},
    )


def debug_id_files(client: Client, org_id: int, project_id: int, debug_ids: list[str]) -> list[StoredFile]:
    """The files of the project carrying one of ``debug_ids``, newest first."""
    return _files(
        client,
        "debug_id_files",
        {"org": org_id, "project": project_id, "ids": debug_ids},
    )


def map_index(client: Client, org_id: int) -> MapIndex:
    """The organization's (release, dist) pairs and map debug ids by project (two small queries)."""
    params = {"org": org_id}
    releases = client.query(load_query("sourcemaps/release_dists"), parameters=params).result_rows
    debug_ids = client.query(load_query("sourcemaps/map_debug_ids"), parameters=params).result_rows
    by_project: dict[int, tuple[set[tuple[str, str]], set[str]]] = {}
    for project, release, dist in releases:
        by_project.setdefault(int(project), (set(), set()))[0].add((str(release), str(dist)))
    for project, debug_id in debug_ids:
        by_project.setdefault(int(project), (set(), set()))[1].add(str(debug_id))
    return MapIndex(org_id, {p: ProjectMaps(frozenset(r), frozenset(d)) for p, (r, d) in by_project.items()})


def delete_bundle(client: Client, org_id: int, project_id: int, bundle_id: str) -> bool:
    """Remove a bundle's manifest rows, and the contents no other bundle of the organization uses."""
    files = [
        f
        for f in _files(
            client,
            "bundle_files",
            {"org": org_id, "project": project_id, "bundle": bundle_id},
        )
    ]
    if not files:
        return False
    params = {"org": org_id, "project": project_id, "bundle": bundle_id}
    client.command(load_query("sourcemaps/bundle_files_delete"), parameters=params)
    client.command(
        load_query("sourcemaps/unused_blobs_delete"),
        parameters={**params, "gone": sorted({f.sha1 for f in files})},
    )
    _changed(org_id)
    return True


@dataclass
class BundleSummary:
    bundle_id: str
    release: str
    dist: str
    uploaded_at: datetime
    size: int
    debug_ids: list[str]
    files: list[StoredFile]


def bundles(client: Client, org_id: int, project_id: int) -> list[BundleSummary]:
    """The project's bundles, newest first, each with its files, total size and debug ids."""
    found: dict[str, BundleSummary] = {}
    for item in project_files(client, org_id, project_id):
        summary = found.get(item.bundle_id)
        if summary is None:
            summary = found[item.bundle_id] = BundleSummary(
                item.bundle_id, item.release, item.dist, item.uploaded_at, 0, [], []
            )
        summary.files.append(item)
        summary.size += item.size
        if item.debug_id and item.debug_id not in summary.debug_ids:
            summary.debug_ids.append(item.debug_id)
    return sorted(found.values(), key=lambda b: b.uploaded_at, reverse=True)
