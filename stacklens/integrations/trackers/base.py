"""What every tracker client offers, the errors they raise and the JSON call they share.

A client is built per use from a :class:`Connection` (the decrypted token never leaves the call) and an
:class:`stacklens.outbound.OutboundClient`, so every request passes the SSRF guard, the total deadline, the
answer's size cap and the in-call retries (5xx, 429 and 408 are retried honouring ``Retry-After``; 4xx
answers are final)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from stacklens.errors import InvalidInput, StackLensError, Unavailable
from stacklens.integrations.document import Document
from stacklens.outbound import (
    AnswerTooLarge,
    DeadlinePassed,
    OutboundClient,
    OutboundRefused,
    OutboundResponse,
)

# A person waits on these calls (the page's Create button), so retries are quick: after 1 s and 3 s, or
# what Retry-After asks up to 20 s; a tracker asking for longer is reported instead of waited on. The
# periodic state sync simply tries again on its next tick.
RETRY_DELAYS_S = (1.0, 3.0)
RETRY_AFTER_MAX_S = 20.0
USER_AGENT = "StackLens-issue-link"


class TrackerError(StackLensError):
    """A tracker call failed; the message says which tracker, what it answered and what to do."""


class TrackerRefused(TrackerError, InvalidInput):
    """The tracker refused (bad token, no access, no such repository/project/ticket): fix, then retry."""


class TrackerUnavailable(TrackerError, Unavailable):
    """The tracker did not answer usefully (timeout, 5xx after retries): retrying later may work."""


@dataclass(frozen=True)
class Connection:
    """A tracker connection as a client needs it (the token decrypted for the call only)."""

    type: str
    base_url: str
    token: str
    email: str = ""
    options: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Account:
    """Who the token is, and the targets (repositories, projects, teams) it can reach."""

    name: str
    targets: list[str]


@dataclass(frozen=True)
class Ticket:
    """A ticket in the tracker: its key (``owner/repo#12``, ``PROJ-7``, ``ENG-3``), its URL, open/closed."""

    key: str
    url: str
    state: str  # "open" | "closed"
    target: str


class Tracker:
    """Base of the four clients."""

    label = "tracker"
    sleep: Callable[[float], None] = staticmethod(time.sleep)  # tests record the waits instead

    def __init__(self, connection: Connection, outbound: OutboundClient) -> None:
        self.connection = connection
        self.outbound = outbound

    # -- what each tracker implements ------------------------------------------------------------------
    def account(self) -> Account:
        raise NotImplementedError

    def create(self, target: str, title: str, body: Document) -> Ticket:
        raise NotImplementedError

    def get(self, reference: str, target: str = "") -> Ticket:
        """The ticket named by a URL or key (``target`` completes a bare number)."""
        raise NotImplementedError

    def find_marker(self, target: str, marker: str) -> Ticket | None:
        """The ticket whose description carries ``marker``, if one was created by an interrupted attempt."""
        raise NotImplementedError

    # -- shared plumbing -------------------------------------------------------------------------------
    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def call(
        self, method: str, url: str, payload: Any = None, what: str = "", *, creates: bool = False
    ) -> Any:
        """One JSON call; the decoded answer, or a :class:`TrackerError` in plain words.

        5xx, 429 and 408 answers are retried (the tracker said it did nothing). A timeout or a dropped
        connection is retried only when the call ``creates`` nothing: a POST that creates a ticket may have
        succeeded before the connection dropped, so it is not sent again blindly — the link's marker search
        settles it (see :mod:`stacklens.integrations.links`)."""
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT, **self.headers()}
        content = None
        if payload is not None:
            content = json.dumps(payload).encode("utf-8")
            headers["Content-Type"] = "application/json"
        attempts = len(RETRY_DELAYS_S) + 1
        for attempt in range(attempts):
            last = attempt == attempts - 1
            try:
                answer = self.outbound.request(method, url, headers, content)
            except OutboundRefused as exc:
                raise TrackerRefused(f"{self.label}: {exc}") from exc
            except AnswerTooLarge as exc:
                raise TrackerRefused(
                    f"{self.label} answered {what or url} with more than it should: {exc}; check the "
                    "connection's base URL"
                ) from exc
            except DeadlinePassed as exc:  # a slow or dripping tracker: not waited on again in this call
                raise TrackerUnavailable(f"{self.label} ({what or url}): {exc}; try again later") from exc
            except httpx.TransportError as exc:
                if not last and not creates:
                    self.sleep(RETRY_DELAYS_S[attempt])
                    continue
                if isinstance(exc, httpx.TimeoutException):
                    raise TrackerUnavailable(
                        f"{self.label} did not answer within {self.outbound.timeout_s:g} s ({what or url}); "
                        "try again later"
                    ) from exc
                raise TrackerUnavailable(f"{self.label} could not be reached ({what or url}): {exc}") from exc
            except httpx.HTTPError as exc:  # an answer that cannot be read (a body not in its encoding)
                raise TrackerUnavailable(
                    f"{self.label} answered {what or url} with a body that cannot be read: {exc}"
                ) from exc
            if answer.retryable and not last:
                wait = max(RETRY_DELAYS_S[attempt], answer.retry_after_s or 0.0)
                if wait <= RETRY_AFTER_MAX_S:
                    self.sleep(wait)
                    continue
                raise TrackerUnavailable(
                    f"{self.label} asks to retry {what or url} after {wait:.0f} s ({answer.status}); try again then"
                )
            break
        if not answer.ok:
            raise self.refusal(answer, what or url, attempt + 1)
        try:
            return json.loads(answer.body) if answer.body.strip() else None
        except ValueError as exc:
            raise TrackerUnavailable(f"{self.label} answered {what or url} with something not JSON") from exc

    # -- reading answers ------------------------------------------------------------------------------
    # A tracker, or a proxy or a look-alike server in front of it, may answer a look-up with any JSON: a
    # list where an object belongs, a string where a number does. These turn such an answer into a
    # TrackerUnavailable in plain words (retrying later may work) instead of an AttributeError or KeyError
    # deep in a client.
    def malformed(self, what: str, found: str) -> TrackerUnavailable:
        return TrackerUnavailable(
            f"{self.label} answered {what} with {found}, not what its API documents; "
            "check the connection's base URL, or try again later"
        )

    def as_object(self, data: Any, what: str) -> dict[str, Any]:
        """``data`` when it is a JSON object."""
        if not isinstance(data, dict):
            raise self.malformed(what, f"{shape_of(data)} where an object was expected")
        return data

    def as_objects(self, data: Any, what: str) -> list[dict[str, Any]]:
        """``data`` when it is a JSON list of objects (``null`` reads as an empty list)."""
        if data is None:
            return []
        if not isinstance(data, list):
            raise self.malformed(what, f"{shape_of(data)} where a list was expected")
        for item in data:
            if not isinstance(item, dict):
                raise self.malformed(what, f"a list holding {shape_of(item)} where objects were expected")
        return data

    def required(self, data: dict[str, Any], key: str, what: str) -> str:
        """A field that identifies the ticket (its number, key or identifier) as text; missing or empty, or
        not a string or a number, is a malformed answer."""
        value = data.get(key)
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            raise self.malformed(what, f"no usable {key!r} ({shape_of(value)})")
        return str(value)

    def refusal(self, answer: OutboundResponse, what: str, attempts: int = 1) -> TrackerError:
        detail = _error_text(answer.body) or answer.excerpt[:200]
        if answer.status in (401, 403):
            return TrackerRefused(
                f"{self.label} refused the token ({answer.status}) for {what}: {detail} — check the token "
                "and its scopes"
            )
        if answer.status == 404:
            return TrackerRefused(f"{self.label} found no {what} (404), or the token cannot see it")
        if answer.retryable:
            return TrackerUnavailable(
                f"{self.label} failed ({answer.status}) on {what} after {attempts} attempt(s): {detail}"
            )
        return TrackerRefused(f"{self.label} refused {what} ({answer.status}): {detail}")


def _error_text(body: str) -> str:
    """The human part of a tracker's error answer (GitHub/GitLab ``message``, Jira ``errorMessages``)."""
    try:
        data = json.loads(body)
    except ValueError:
        return ""
    if not isinstance(data, dict):
        return ""
    parts: list[str] = []
    for key in ("message", "error", "error_description"):
        if isinstance(data.get(key), str):
            parts.append(data[key])
    if isinstance(data.get("errorMessages"), list):
        parts.extend(str(m) for m in data["errorMessages"])
    if isinstance(data.get("errors"), dict):
        parts.extend(f"{k}: {v}" for k, v in data["errors"].items())
    elif isinstance(data.get("errors"), list):
        parts.extend(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in data["errors"])
    return "; ".join(parts)[:300]


def shape_of(data: Any) -> str:
    """What a JSON value is, in words: "a JSON list", "a JSON string", "nothing"."""
    if data is None:
        return "nothing"
    if isinstance(data, bool):
        return "a JSON boolean"
    if isinstance(data, dict):
        return "a JSON object"
    if isinstance(data, list):
        return "a JSON list"
    if isinstance(data, str):
        return "a JSON string"
    return "a JSON number"


def member(data: Any, *path: str) -> Any:
    """``data[path[0]][path[1]]…`` through JSON objects only; ``None`` where a step is missing or is not an
    object (optional parts of an answer, such as a Jira status category)."""
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def text(value: Any) -> str:
    """An optional display field (a user name, a URL) as text; anything but a string or a number is ""."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    return str(value)


def strip_base(url: str) -> str:
    return url.strip().rstrip("/")
