"""Server-side scrubbing: secrets never reach the warehouse, whatever the SDK was configured to send.

Values under sensitive names (headers, body/query fields, cookies, frame variables, extra, breadcrumb data,
contexts) become ``[FILTERED]``, and so does any credit-card-like digit run that passes the Luhn check and
begins as payment cards do (2–6). Anything shaped like a secret — a StackLens key, cloud and forge tokens,
JWTs, private keys, a password in a URL — becomes ``[FILTERED]`` in every string of the event, wherever it
is (sentry-sdk's ``sys.argv`` extra carries ``--app-key stacklens_app_…``).
The SDKs scrub too (Sentry's ``[Filtered]``); this is the last line, for SDKs configured to send PII.
"""

from __future__ import annotations

import json
import re
from contextvars import ContextVar
from functools import lru_cache
from typing import Any
from urllib.parse import parse_qsl, urlencode

from stacklens.ingest.card_numbers import card_hint, holds_card, replace_cards
from stacklens.ingest.secret_redaction import redact_line, secret_hint
from stacklens_contract.words import FILTERED

SENSITIVE_HEADERS = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "cookie",
        "set-cookie",
        "x-api-key",
        "x-auth-token",
        "x-access-token",
        "x-csrf-token",
        "x-csrftoken",
        "x-xsrf-token",
        "x-stacklens-app-key",
        "x-amz-security-token",
    }
)
# Keys compared lower-cased without "-", "_", " " and ".": "API-Key", "api_key" and "apiKey" agree.
_SENSITIVE_PARTS = (
    "password",
    "passwd",
    "passphrase",
    "secret",
    "token",
    "apikey",
    "accesskey",
    "privatekey",
    "credential",
    "session",
    "csrf",
    "xsrf",
    "cookie",
    "authorization",
    "creditcard",
    "cardnumber",
    "cvv",
    "cvc",
)
_SENSITIVE_EXACT = frozenset({"auth", "pwd", "mysqlpwd", "pin", "ssn", "otp", "jwt", "bearer", "sid"})
# False while scrubbing a payload whose raw text holds no card-like digit run at all: then no string in it
# can, and the per-string search is skipped.
_cards_possible: ContextVar[bool] = ContextVar("cards_possible", default=True)
_secrets_possible: ContextVar[bool] = ContextVar("secrets_possible", default=True)
# A whole body of 1 MiB would be slow to walk char by char; lines are capped at the ingest limit anyway.
_MAX_DEPTH = 64


_SENSITIVE_RE = re.compile("|".join(_SENSITIVE_PARTS))


@lru_cache(maxsize=16384)
def is_sensitive_key(key: object) -> bool:
    """Whether values under this key name are secrets (names repeat across events: cached)."""
    if not isinstance(key, str):
        return False
    norm = re.sub(r"[-_ .]", "", key.lower())
    if norm in _SENSITIVE_EXACT or norm.endswith("auth"):
        return True
    return _SENSITIVE_RE.search(norm) is not None


def scrub_string(text: str) -> str:
    """Replace card numbers (13–19 digits, spaces or dashes allowed, Luhn-valid) inside a string."""
    if len(text) < 13 or not _cards_possible.get() or not card_hint(text.encode("utf-8", "surrogatepass")):
        return text
    return replace_cards(text)


def scrub_value(value: Any, depth: int = 0) -> Any:
    """Scrub any JSON value: sensitive keys anywhere in it, card numbers in every string.

    Copy-on-write: a dict or list comes back as the same object when nothing in it changed, so the common
    case (nothing to filter in a subtree) allocates nothing; the input is never modified.
    """
    kind = type(value)
    if kind is dict:
        return _scrub_dict(value, depth)
    if kind is list:
        return _scrub_list(value, depth)
    if kind is str:
        return scrub_string(value) if _cards_possible.get() else value
    return value


# Key names already judged safe: a dict whose keys are all among them (nearly every dict once a payload
# shape has been seen) needs one set comparison in C instead of a lookup per key. Bounded by clearing.
_SAFE_KEYS: set[str] = set()
_MAX_SAFE_KEYS = 50_000


def _has_sensitive_key(value: dict[str, Any]) -> bool:
    if _SAFE_KEYS.issuperset(value):
        return False
    if len(_SAFE_KEYS) > _MAX_SAFE_KEYS:
        _SAFE_KEYS.clear()
    found = False
    for key in value:
        if is_sensitive_key(key):
            found = True
        elif type(key) is str:
            _SAFE_KEYS.add(key)
    return found


def _scrub_dict(value: dict[str, Any], depth: int) -> dict[str, Any]:
    if depth > _MAX_DEPTH:
        return value
    cards = _cards_possible.get()
    check_keys = _has_sensitive_key(value)
    out: dict[str, Any] | None = None
    for key, item in value.items():
        kind = type(item)
        if check_keys and is_sensitive_key(key):
            new = FILTERED if item is not None and item != "" else item
        elif kind is dict:
            new = _scrub_dict(item, depth + 1)
        elif kind is list:
            new = _scrub_list(item, depth + 1)
        elif kind is str and cards:
            new = scrub_string(item)
        else:
            continue
        if new is not item:
            if out is None:
                out = dict(value)
            out[key] = new
    return value if out is None else out


def _scrub_list(value: list[Any], depth: int) -> list[Any]:
    if depth > _MAX_DEPTH:
        return value
    cards = _cards_possible.get()
    out: list[Any] | None = None
    for index, item in enumerate(value):
        kind = type(item)
        if kind is list:
            if len(item) == 2 and is_sensitive_key(item[0]):
                # [[name, value], ...] pairs (Sentry's header and query lists) are key/value data too.
                new: Any = [item[0], FILTERED]
            else:
                new = _scrub_list(item, depth + 1)
        elif kind is dict:
            new = _scrub_dict(item, depth + 1)
        elif kind is str and cards:
            new = scrub_string(item)
        else:
            continue
        if new is not item:
            if out is None:
                out = list(value)
            out[index] = new
    return value if out is None else out


def _scrub_headers(headers: Any) -> Any:
    if isinstance(headers, dict):
        return {
            k: FILTERED
            if isinstance(k, str) and (k.lower() in SENSITIVE_HEADERS or is_sensitive_key(k))
            else scrub_value(v)
            for k, v in headers.items()
        }
    if isinstance(headers, list):
        return [
            [h[0], FILTERED]
            if isinstance(h, list)
            and len(h) == 2
            and isinstance(h[0], str)
            and (h[0].lower() in SENSITIVE_HEADERS or is_sensitive_key(h[0]))
            else scrub_value(h)
            for h in headers
        ]
    return scrub_value(headers)


def _scrub_query(query: Any) -> Any:
    if isinstance(query, str):
        pairs = parse_qsl(query, keep_blank_values=True)
        if not pairs:
            return scrub_string(query)
        return urlencode(
            [(k, FILTERED if is_sensitive_key(k) else scrub_string(v)) for k, v in pairs], safe="[]"
        )
    return scrub_value(query)


def _scrub_body(data: Any) -> Any:
    if isinstance(data, str):
        stripped = data.strip()
        if stripped[:1] in ("{", "["):
            try:
                return json.dumps(scrub_value(json.loads(stripped)))
            except ValueError:
                pass
        if "=" in stripped and " " not in stripped:
            return _scrub_query(stripped)
        return scrub_string(data)
    return scrub_value(data)


def _scrub_request(request: dict[str, Any]) -> dict[str, Any]:
    out = dict(request)
    if "headers" in out:
        out["headers"] = _scrub_headers(out["headers"])
    if out.get("cookies"):
        out["cookies"] = FILTERED  # cookies are sessions: no cookie value is worth keeping
    if "query_string" in out:
        out["query_string"] = _scrub_query(out["query_string"])
    if "data" in out:
        out["data"] = _scrub_body(out["data"])
    if isinstance(out.get("url"), str) and "?" in out["url"]:
        base, _, query = out["url"].partition("?")
        out["url"] = f"{base}?{_scrub_query(query)}"
    if "env" in out:
        out["env"] = scrub_value(out["env"])
    return out


def _scrub_frames(stack: Any) -> Any:
    """Frame variables of a stack trace, copy-on-write like :func:`scrub_value` (most hold no secret)."""
    if not isinstance(stack, dict) or not isinstance(stack.get("frames"), list):
        return stack
    frames: list[Any] | None = None
    for index, frame in enumerate(stack["frames"]):
        if type(frame) is dict and "vars" in frame:
            variables = frame["vars"]
            scrubbed = scrub_value(variables)
            if scrubbed is not variables:
                if frames is None:
                    frames = list(stack["frames"])
                frames[index] = {**frame, "vars": scrubbed}
    return stack if frames is None else {**stack, "frames": frames}


def _scrub_exception_value(value: dict[str, Any]) -> dict[str, Any]:
    out = value
    text = value.get("value")
    if isinstance(text, str):
        scrubbed_text = scrub_string(text)
        if scrubbed_text is not text:
            out = {**out, "value": scrubbed_text}
    if "stacktrace" in value:
        stack = _scrub_frames(value["stacktrace"])
        if stack is not value["stacktrace"]:
            out = {**out, "stacktrace": stack}
    return out


def _scrub_exception(exc: Any) -> Any:
    """Frame variables of every exception (or thread) in the chain; both Sentry shapes."""
    values = exc.get("values") if isinstance(exc, dict) else exc
    if not isinstance(values, list):
        return exc
    scrubbed = [_scrub_exception_value(v) if isinstance(v, dict) else v for v in values]
    if all(new is old for new, old in zip(scrubbed, values, strict=True)):
        return exc
    return {**exc, "values": scrubbed} if isinstance(exc, dict) else scrubbed


def scrub_payload(
    payload: dict[str, Any], raw: bytes | None = None, shape: bytes = b"", line_key: str | None = None
) -> dict[str, Any]:
    """A scrubbed copy of one Sentry event or transaction payload (the input is not changed).

    ``raw``, the JSON the payload was parsed from, lets one card search over the whole text spare the
    per-string searches when it finds no card; ``shape``, its :data:`~stacklens.ingest.validate.SHAPE`
    translation when the caller has it already (the line's validation made it), spares that pass too;
    ``line_key``, the app key of the line ``raw`` is, is not taken for a secret in it (see ``secret_hint``).
    """
    token = _cards_possible.set(raw is None or holds_card(raw, shape))
    try:
        out = _scrub_payload(payload)
    finally:
        _cards_possible.reset(token)
    if raw is None or secret_hint(raw, line_key):
        out = redact_line(out, raw)
    return out


def _scrub_payload(payload: dict[str, Any]) -> dict[str, Any]:
    out = dict(payload)
    if isinstance(out.get("request"), dict):
        out["request"] = _scrub_request(out["request"])
    if "exception" in out:
        out["exception"] = _scrub_exception(out["exception"])
    if isinstance(out.get("threads"), dict | list):
        out["threads"] = _scrub_exception(out["threads"])
    if isinstance(out.get("stacktrace"), dict):
        out["stacktrace"] = _scrub_frames(out["stacktrace"])
    for key in ("extra", "contexts", "tags", "user", "spans", "measurements_meta"):
        if key in out:
            out[key] = scrub_value(out[key])
    crumbs = out.get("breadcrumbs")
    if crumbs is not None:
        out["breadcrumbs"] = scrub_value(crumbs)
    if isinstance(out.get("message"), str | dict):
        out["message"] = scrub_value(out["message"])
    if isinstance(out.get("logentry"), dict):
        out["logentry"] = scrub_value(out["logentry"])
    return out
