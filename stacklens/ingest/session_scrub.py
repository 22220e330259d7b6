"""The scrubbing of release-health items (``session`` updates and ``sessions`` aggregates) before their rows
are made (:mod:`stacklens.ingest.sessions`): the user a session names is user data like an event's user.

An SDK sends the user as ``did`` (sentry-python: the user's id, else e-mail, else name; @sentry/browser: the
id) and the client's address as ``attrs.ip_address``; ``did`` is stored (release health counts users by it),
the address never is. So the built-in scrubbing (:func:`stacklens.ingest.scrub.scrub_payload`: card numbers,
secret-shaped strings) and the project's rules (:mod:`stacklens.scrubbing`) see each session as an event
with a user: ``{"user": {"id": did}, "attrs": {...}}`` — ``{"user": {"email": did}}`` when ``did`` is an
e-mail address — so the rules an event's user follows (``user.email``, ``$user``, ``$string``, a pattern)
scrub the same user in release health, to the same hash (docs/scrubbing.md). An aggregate bucket's ``did`` is
scrubbed as ``{"user": …}``. A ``did`` a rule removes is stored as no user.
"""

from __future__ import annotations

from typing import Any

from stacklens.ingest.scrub import scrub_payload
from stacklens.scrubbing.apply import ScrubRules

_GONE = object()


def _user(did: Any) -> tuple[str, dict[str, Any]]:
    key = "email" if isinstance(did, str) and "@" in did else "id"
    return key, {key: did}


def _scrubbed(
    view: dict[str, Any], rules: ScrubRules, raw: bytes | None, line_key: str | None
) -> dict[str, Any]:
    return rules.apply(scrub_payload(view, raw, b"", line_key), raw)


def _did_of(out: dict[str, Any], key: str) -> Any:
    user = out.get("user")
    return user.get(key, _GONE) if isinstance(user, dict) else _GONE


def scrub_session(
    item_type: str,
    payload: dict[str, Any],
    rules: ScrubRules,
    raw: bytes | None = None,
    line_key: str | None = None,
) -> dict[str, Any]:
    """A copy of ``payload`` (a ``session`` or ``sessions`` item) with its user and attributes scrubbed (the
    input is not changed). A ``did`` or ``attrs`` a rule removed is left out (no ``attrs``: the item is
    refused for its missing release); ``attrs.ip_address`` is left out always (it is never stored)."""
    out = dict(payload)
    attrs = payload.get("attrs")
    view: dict[str, Any] = {}
    if isinstance(attrs, dict):
        view["attrs"] = {k: v for k, v in attrs.items() if k != "ip_address"}
    elif attrs is not None:
        view["attrs"] = attrs
    key = ""
    if item_type == "session" and payload.get("did") is not None:
        key, view["user"] = _user(payload["did"])
    done = _scrubbed(view, rules, raw, line_key) if view else view
    if "attrs" in view:
        _put(out, "attrs", done.get("attrs", _GONE))
    if key:
        _put(out, "did", _did_of(done, key))
    buckets = payload.get("aggregates")
    if item_type == "sessions" and isinstance(buckets, list):
        out["aggregates"] = [_bucket(b, rules, raw, line_key) for b in buckets]
    return out


def _put(out: dict[str, Any], name: str, value: Any) -> None:
    if value is _GONE:
        out.pop(name, None)
    else:
        out[name] = value


def _bucket(bucket: Any, rules: ScrubRules, raw: bytes | None, line_key: str | None) -> Any:
    if not isinstance(bucket, dict) or bucket.get("did") is None:
        return bucket
    key, user = _user(bucket["did"])
    out = dict(bucket)
    _put(out, "did", _did_of(_scrubbed({"user": user}, rules, raw, line_key), key))
    return out
