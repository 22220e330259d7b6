"""Fold concrete URLs into routes, so ``/users/42`` and ``/users/7`` are one page or one API endpoint.

Used for a transaction's ``page``, for API endpoint paths of ``http.client`` spans, and by the pipelines, so
every figure keyed by a route agrees on the same spelling.
"""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import unquote, urlsplit

_NUMERIC = re.compile(r"^\d+$")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
# 12+ hex characters with a digit and a letter is a digest or object id, not a word (``deadbeefcafe``).
_LONG_HEX = re.compile(r"^(?=.*\d)(?=.*[a-fA-F])[0-9a-fA-F]{12,}$")
# Long opaque tokens: 20+ URL-safe characters mixing letters and digits (base64 ids, signed tokens).
_TOKEN = re.compile(r"^(?=.*\d)(?=.*[A-Za-z])[A-Za-z0-9_\-=.~]{20,}$")
# Fingerprinted assets: app.3f9a1c2b.js, main-8c1e2f0a.css (the hash changes with every release).
_ASSET_HASH = re.compile(r"^(.+?)[.-]([0-9a-fA-F]{8,})(\.[A-Za-z0-9]+)$")
_MAX_SEGMENTS = 32


def _segment(segment: str) -> str:
    if not segment:
        return segment
    raw = unquote(segment)
    if _NUMERIC.match(raw):
        return "{id}"
    if _UUID.match(raw):
        return "{uuid}"
    if _LONG_HEX.match(raw) or _TOKEN.match(raw):
        return "{hash}"
    asset = _ASSET_HASH.match(raw)
    if asset:
        return f"{asset.group(1)}.{{hash}}{asset.group(3)}"
    return segment


@lru_cache(maxsize=65536)
def normalise_route(url_or_path: str) -> str:
    """The route of a URL or path: path only (no scheme, host, query or fragment), ids folded.

    >>> normalise_route("https://shop.example/orders/1234/items/9f1c2a7e-2b1e-4c1a-9a3e-1d2c3b4a5f60?x=1")
    '/orders/{id}/items/{uuid}'
    """
    text = (url_or_path or "").strip()
    if not text:
        return "/"
    parts = urlsplit(text)
    path = parts.path if (parts.scheme or parts.netloc) else text.split("?", 1)[0].split("#", 1)[0]
    if not path.startswith("/"):
        path = "/" + path
    segments = path.split("/")[1 : _MAX_SEGMENTS + 1]
    folded = "/" + "/".join(_segment(s) for s in segments)
    # "/orders/" and "/orders" are one route; "//" from sloppy joins collapses too.
    folded = re.sub(r"/{2,}", "/", folded)
    if len(folded) > 1:
        folded = folded.rstrip("/")
    return folded or "/"
