"""The upload protocol sentry-cli speaks, on the domain side: chunk options, chunk storage, assembly.

1. ``GET …/chunk-upload/`` answers :func:`chunk_options`; 2. sentry-cli asks ``…/artifactbundle/assemble/``
with the bundle's SHA-1 and its chunks' SHA-1s and is told the ``missingChunks``; 3. it posts those chunks
(plain or gzip, each named by the SHA-1 of its uncompressed bytes) and asks again; 4. the bundle is put
together, checked whole, and stored; the answer's ``state`` is ``ok``, or ``error`` with the reason.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass, field

from clickhouse_connect.driver.client import Client

from stacklens.errors import InvalidInput, TooLarge
from stacklens.sourcemaps import store
from stacklens.sourcemaps.bundle import CHUNK_SIZE, MAX_BUNDLE_SIZE, MAX_REQUEST_SIZE, read_bundle

SHA1 = re.compile(r"^[0-9a-f]{40}$")
CHUNKS_PER_REQUEST = 4


def chunk_options(url: str) -> dict[str, object]:
    """What sentry-cli reads before uploading: where, how large, which compressions, what it may send."""
    return {
        "url": url,
        "chunkSize": CHUNK_SIZE,
        "chunksPerRequest": CHUNKS_PER_REQUEST,
        "maxFileSize": MAX_BUNDLE_SIZE,
        "maxRequestSize": MAX_REQUEST_SIZE,
        "concurrency": 2,
        "hashAlgorithm": "sha1",
        "compression": ["gzip"],
        "accept": ["artifact_bundles", "artifact_bundles_v2", "sources"],
    }


def accept_chunks(client: Client, org_id: int, parts: list[tuple[str, str, bytes]]) -> int:
    """Store ``(field, name, bytes)`` parts; ``field`` is ``file`` or ``file_gzip``. Every chunk is checked
    (size, gzip, SHA-1) before any is stored, so a bad one leaves the request's others unstored too."""
    chunks: dict[str, bytes] = {}
    for field_name, name, data in parts:
        if field_name not in ("file", "file_gzip"):
            raise InvalidInput(f"unknown form field {field_name!r}; chunks come as `file` or `file_gzip`")
        if field_name == "file_gzip":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as exc:
                raise InvalidInput(f"chunk {name!r} is not valid gzip ({exc})") from exc
        if len(data) > CHUNK_SIZE:
            raise TooLarge(f"chunk {name!r} is {len(data):,} bytes; chunks are at most {CHUNK_SIZE:,}")
        digest = store.sha1_hex(data)
        if name.lower() != digest:
            raise InvalidInput(f"chunk {name!r} does not match its content (its SHA-1 is {digest})")
        chunks[digest] = data
    if not chunks:
        raise InvalidInput("the request holds no chunks (form fields `file` or `file_gzip`)")
    store.put_blobs(client, org_id, store.CHUNK, chunks)
    return len(chunks)


@dataclass
class AssembleResult:
    state: str  # "ok", "not_found" (chunks missing), "error"
    missing: list[str] = field(default_factory=list)
    detail: str | None = None

    def answer(self) -> dict[str, object]:
        return {"state": self.state, "missingChunks": self.missing, "detail": self.detail}


def assemble(
    client: Client,
    org_id: int,
    project_ids: list[int],
    checksum: str,
    chunks: list[str],
    release: str = "",
    dist: str = "",
) -> AssembleResult:
    """Put a bundle together from its chunks and store it for every project, or say what is missing."""
    checksum = checksum.lower()
    chunks = [c.lower() for c in chunks]
    bad = [c for c in [checksum, *chunks] if not SHA1.match(c)]
    if bad:
        raise InvalidInput(f"`checksum` and `chunks` must be 40-character SHA-1 hex strings, not {bad[0]!r}")
    if not chunks:
        raise InvalidInput("`chunks` is empty; list the SHA-1 of every chunk of the bundle")
    if len(chunks) * CHUNK_SIZE > MAX_BUNDLE_SIZE + CHUNK_SIZE:
        raise TooLarge(f"the bundle has {len(chunks)} chunks; at most {MAX_BUNDLE_SIZE:,} bytes are accepted")
    todo = [p for p in project_ids if not store.has_bundle(client, org_id, p, checksum)]
    if not todo:
        return AssembleResult("ok")
    have = store.present(client, org_id, store.CHUNK, chunks)
    missing = [c for c in dict.fromkeys(chunks) if c not in have]
    if missing:
        return AssembleResult("not_found", missing)
    blobs = store.get_blobs(client, org_id, store.CHUNK, chunks)
    data = b"".join(blobs[c] for c in chunks)
    if store.sha1_hex(data) != checksum:
        return AssembleResult("error", detail=f"the chunks do not add up to the bundle's checksum {checksum}")
    try:
        bundle = read_bundle(data, release, dist)
    except InvalidInput as exc:
        return AssembleResult("error", detail=str(exc))
    store.put_bundle(client, org_id, todo, checksum, bundle)
    return AssembleResult("ok")
