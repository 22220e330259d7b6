"""Send a bundle to a StackLens server the way sentry-cli does (chunk settings, assemble, missing chunks,
assemble again). Used by ``stacklens sourcemaps upload`` and the demo; both talk to the configured StackLens
server, not to the outside, so this uses httpx directly rather than the SSRF-guarded outbound client."""

from __future__ import annotations

import gzip
import time
from typing import Any

import httpx

from stacklens.errors import InvalidInput, Unavailable
from stacklens.sourcemaps.bundle import Bundle
from stacklens.sourcemaps.packing import pack
from stacklens.sourcemaps.store import sha1_hex


class UploadRefused(InvalidInput):
    """The server refused the bundle; the message carries its reason."""


def send_bundle(
    url: str, api_key: str, project: str, bundle: Bundle, org: str = "-", timeout: float = 120.0
) -> str:
    """Upload ``bundle`` for ``project``; return the bundle id (its SHA-1)."""
    data = pack(bundle, project=project)
    base = f"{url.rstrip('/')}/api/0/organizations/{org}"
    with httpx.Client(headers={"Authorization": f"Bearer {api_key}"}, timeout=timeout) as http:
        options = _json(http.get(f"{base}/chunk-upload/"))
        size = int(options.get("chunkSize") or 8 * 1024 * 1024)
        chunks = [data[i : i + size] for i in range(0, len(data), size)]
        named = {sha1_hex(c): c for c in chunks}
        request = {
            "checksum": sha1_hex(data),
            "chunks": [sha1_hex(c) for c in chunks],
            "projects": [project],
            "version": bundle.release,
            "dist": bundle.dist or None,
        }
        answer = _json(http.post(f"{base}/artifactbundle/assemble/", json=request))
        deadline = time.monotonic() + timeout
        while answer.get("state") not in ("ok", "created", "error"):
            for sha1 in answer.get("missingChunks") or []:
                files = {"file_gzip": (sha1, gzip.compress(named[sha1]), "application/octet-stream")}
                _json(http.post(str(options.get("url") or f"{base}/chunk-upload/"), files=files))
            if time.monotonic() > deadline:
                raise Unavailable("the server did not finish assembling the bundle in time")
            answer = _json(http.post(f"{base}/artifactbundle/assemble/", json=request))
    if answer.get("state") == "error":
        raise UploadRefused(f"the server refused the bundle: {answer.get('detail')}")
    return str(request["checksum"])


def _json(response: httpx.Response) -> dict[str, Any]:
    if response.status_code >= 400:
        try:
            body = response.json()
            detail = body.get("detail") or body.get("error") or response.text
        except ValueError:
            detail = response.text[:300]
        raise UploadRefused(f"the server answered {response.status_code}: {detail}")
    if not response.content:
        return {}
    return dict(response.json())
