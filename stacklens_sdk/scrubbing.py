"""What is filtered before an event leaves the process, and how breadcrumbs are categorised.

sentry-sdk's ``EventScrubber`` does the work; we widen its denylist, match header spellings (``X-Api-Key``
and ``x_api_key`` alike), scrub nested body fields, and write the marker the dashboards show, ``[FILTERED]``.
Then every string of the event is searched for secret shapes — StackLens keys (sentry-sdk's ``sys.argv``
extra carries ``--app-key stacklens_app_…``), cloud and forge tokens, JWTs, private keys, URL passwords —
the shapes of the shared contract (``stacklens_contract/secret_shapes.py``), which the service filters at
ingest too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from sentry_sdk import utils as sentry_utils
from sentry_sdk.scrubber import DEFAULT_DENYLIST, DEFAULT_PII_DENYLIST, EventScrubber
from sentry_sdk.utils import capture_internal_exceptions, iter_event_frames

from stacklens_contract.secret_shapes import redact_secrets
from stacklens_contract.words import BREADCRUMB_CATEGORIES, FILTERED


class AnnotatedShape(Protocol):
    """What we use of sentry-sdk's ``AnnotatedValue``: a value the SDK changed and Relay's metadata about it
    (written to the event's ``_meta`` when the event is serialised)."""

    value: Any
    metadata: dict[str, Any]

    def __init__(self, value: Any, metadata: dict[str, Any]) -> None: ...


# The SDK's class itself, not a look-alike: its serialiser writes ``_meta`` only for its own class, and frame
# variables hold the application's live objects, which a check by attribute names could mistake for one. The
# class is not in sentry-sdk's public API (it is defined in the private ``sentry_sdk._types``, and
# ``sentry_sdk.utils``, where the SDK's own scrubber and integrations take it, imports it without exporting
# it), so it is typed by :class:`AnnotatedShape` here and taken from that module by name.
AnnotatedValue: type[AnnotatedShape] = vars(sentry_utils)["AnnotatedValue"]

# sentry-sdk's own marker, written by its integrations for sensitive headers before the scrubber runs.
_SENTRY_FILTERED = "[Filtered]"

EXTRA_DENYLIST = [
    "access_token",
    "refresh_token",
    "id_token",
    "client_secret",
    "api_token",
    "apitoken",
    "x_auth_token",
    "x_access_token",
    "pass",
    "pwd",
    "pin",
    "otp",
    "card_number",
    "cardnumber",
    "credit_card",
    "cc_number",
    "cvv",
    "cvc",
    "iban",
    "ssn",
    "social_security_number",
    "stacklens_api_key",
]

_MAX_DEPTH = 64


def redact_everywhere(value: Any, depth: int = 0) -> Any:
    """Redact secrets in every string of ``value``, in place for dicts and lists; returns the value."""
    if isinstance(value, str):
        return redact_secrets(value)
    if isinstance(value, AnnotatedValue):
        value.value = redact_everywhere(value.value, depth)
        return value
    if depth > _MAX_DEPTH:
        return value
    if isinstance(value, dict):
        for key in list(value):
            value[key] = redact_everywhere(value[key], depth + 1)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            value[index] = redact_everywhere(item, depth + 1)
    return value


_ERROR_LEVELS = {"error", "fatal", "critical"}


# Local variables are serialised reprs: a header name in an ASGI scope reads "b'authorization'".
_REPR_QUOTES = re.compile(r"""^b?(['"])(.*)\1$""")


def _norm(key: str) -> str:
    return _REPR_QUOTES.sub(r"\2", key).lower().replace("-", "_")


def _filtered() -> AnnotatedShape:
    # Same annotation sentry-sdk uses ("removed by config, substituted"), with our marker.
    return AnnotatedValue(value=FILTERED, metadata={"rem": [["!config", "s"]]})


class StacklensScrubber(EventScrubber):
    """sentry-sdk's scrubber with the StackLens denylist, recursive, writing ``[FILTERED]``.

    Local variables of vendor (not in-app) frames are dropped unless ``vendor_frame_vars`` is set: framework
    frames hold the raw request (an ASGI ``scope`` with every header, the body bytes) where no field name
    says what is sensitive.
    """

    def __init__(
        self,
        denylist: Iterable[str] | None = None,
        *,
        send_default_pii: bool = False,
        pii_denylist: Iterable[str] | None = None,
        vendor_frame_vars: bool = False,
    ) -> None:
        self.vendor_frame_vars = vendor_frame_vars
        base = list(DEFAULT_DENYLIST) + EXTRA_DENYLIST + list(denylist or [])
        pii = list(DEFAULT_PII_DENYLIST) + list(pii_denylist or [])
        super().__init__(denylist=base, recursive=True, send_default_pii=send_default_pii, pii_denylist=pii)
        self.denylist = sorted({_norm(k) for k in self.denylist})
        self._deny = frozenset(self.denylist)

    def scrub_dict(self, d: object) -> None:
        if not isinstance(d, dict):
            return
        for key, value in d.items():
            if (
                (isinstance(key, str) and _norm(key) in self._deny)
                or value == _SENTRY_FILTERED
                or (isinstance(value, AnnotatedValue) and value.value == _SENTRY_FILTERED)
            ):
                d[key] = _filtered()
            else:
                self.scrub_dict(value)
                self.scrub_list(value)

    def scrub_list(self, lst: object) -> None:
        if not isinstance(lst, list):
            return
        # A (name, value) pair, as in raw header lists: filter the value when the name is sensitive.
        if len(lst) == 2 and isinstance(lst[0], str) and _norm(lst[0]) in self._deny:
            lst[1] = _filtered()
            return
        for value in lst:
            self.scrub_dict(value)
            self.scrub_list(value)

    def scrub_event(self, event: Any) -> None:
        super().scrub_event(event)
        with capture_internal_exceptions():
            redact_everywhere(event)

    def scrub_frames(self, event: Any) -> None:
        with capture_internal_exceptions():
            for frame in iter_event_frames(event):
                if "vars" not in frame:
                    continue
                if frame.get("in_app") is False and not self.vendor_frame_vars:
                    del frame["vars"]
                else:
                    self.scrub_dict(frame["vars"])


def categorise_breadcrumb(crumb: dict[str, Any]) -> dict[str, Any]:
    """Map sentry-sdk's integration breadcrumbs onto the categories the dashboards filter by.

    HTTP client calls (``httplib``, ``httpx``, … with ``type: http``) become ``http``; log records become
    ``console``, or ``error`` at error level and above, keeping the logger name in ``data.logger``. Categories
    the application sets itself are left alone.
    """
    kind = crumb.get("type")
    category = crumb.get("category")
    if kind == "http" and category != "http":
        crumb["category"] = "http"
    elif kind == "navigation":
        crumb["category"] = "navigation"
    elif kind == "log":
        data = crumb.get("data")
        if not isinstance(data, dict):
            data = crumb["data"] = {}
        if category not in BREADCRUMB_CATEGORIES:
            data.setdefault("logger", category)
        crumb["category"] = "error" if str(crumb.get("level", "")).lower() in _ERROR_LEVELS else "console"
    return crumb


BeforeBreadcrumb = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any] | None]


def chain_before_breadcrumb(user_hook: BeforeBreadcrumb | None) -> BeforeBreadcrumb:
    """Our categorisation first, then the application's own ``before_breadcrumb`` (which may drop it)."""

    def before_breadcrumb(crumb: dict[str, Any], hint: dict[str, Any]) -> dict[str, Any] | None:
        crumb = categorise_breadcrumb(crumb)
        return user_hook(crumb, hint) if user_hook is not None else crumb

    return before_breadcrumb
