"""The project's scrubbing rules on a ``log`` record (:mod:`stacklens.ingest.logs`), with the user it names
seen as an event's user (docs/scrubbing.md, "What the rules see").

Sentry SDKs send the user of a log record as attributes (sentry-python: ``user.id``, ``user.name`` — the
user's ``username`` —, ``user.email`` and ``user.ip_address``, each plain or as ``{"value", "type"}``). The
rules see the record as sent (``body``, ``attributes.<name>``) and those attributes a second time as an
event's user, ``{"user": {"id", "username", "email", "ip_address"}}``: a rule written for the events
(``user.email``, ``user.ip_address``, ``$user``) scrubs the same user in the logs, to the same hash (same
value, same project key), and a rule on ``attributes.'user.email'`` still applies. All rules run in one
pass; when both views of an attribute changed, the user's wins, and a removal in either view removes it.
The built-in scrubbing runs afterwards, in :func:`stacklens.ingest.logs.log_row`.
"""

from __future__ import annotations

from typing import Any

from stacklens.scrubbing.apply import ScrubRules

# Log attribute → the key of an event's ``user`` it is.
USER_ATTRIBUTES = {
    "user.id": "id",
    "user.name": "username",
    "user.email": "email",
    "user.ip_address": "ip_address",
}
_GONE = object()


def _plain(item: Any) -> Any:
    """An attribute's value: Sentry's typed form ``{"value", "type"}`` unwrapped."""
    if isinstance(item, dict) and "value" in item and "type" in item:
        return item["value"]
    return item


def scrub_log(payload: dict[str, Any], rules: ScrubRules, raw: bytes | None = None) -> dict[str, Any]:
    """``payload`` (one log record) with the project's rules applied, its user attributes as an event's
    user too (the input is not changed)."""
    if not rules.rules:
        return payload
    attributes = payload.get("attributes")
    held = (
        {name: key for name, key in USER_ATTRIBUTES.items() if name in attributes}
        if isinstance(attributes, dict)
        else {}
    )
    if not held:
        return rules.apply(payload, raw)
    assert isinstance(attributes, dict)
    user = {key: _plain(attributes[name]) for name, key in held.items()}
    done = rules.apply({**payload, "user": user}, raw)
    seen = done.get("user")
    seen = seen if isinstance(seen, dict) else {}
    out = {k: v for k, v in done.items() if k != "user"}
    scrubbed = out.get("attributes")
    if not isinstance(scrubbed, dict):
        return out  # a rule removed the attributes whole
    scrubbed = dict(scrubbed)
    for name, key in held.items():
        as_user = seen.get(key, _GONE)
        if as_user is _GONE or name not in scrubbed:
            scrubbed.pop(name, None)
        elif as_user is not user[key] and as_user != user[key]:
            scrubbed[name] = as_user
    out["attributes"] = scrubbed
    return out
