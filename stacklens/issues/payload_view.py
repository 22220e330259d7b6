"""Turn a stored (scrubbed) Sentry event payload into the parts of the issue view.

The payload is attacker-controlled JSON of any shape: every accessor tolerates missing keys and wrong types,
and values leave here as plain strings and lists for the templates to escape. Sensitive headers and body
fields were scrubbed at ingest; the view filters ``Authorization`` and ``Cookie`` again so a payload stored
by an older ingest can never show them.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any, NotRequired, TypedDict
from urllib.parse import parse_qsl

from stacklens.ingest.grouping.v1 import frames_of
from stacklens.ingest.grouping.v2 import stack_frames
from stacklens.ingest.in_app import NO_RULES, InAppRules, frame_in_app
from stacklens.ingest.useragent import parse_user_agent
from stacklens.issues.events import EventRow
from stacklens_contract.words import BREADCRUMB_CATEGORIES, FILTERED

# A stored payload, or an object inside one: the client's JSON as it was sent (scrubbed), of any shape. It stays
# a plain dict; what leaves this module is typed below.
Payload = dict[str, Any]

ALWAYS_FILTERED_HEADERS = frozenset({"authorization", "cookie", "set-cookie", "proxy-authorization"})
# Sentry SDK integrations that name the web framework, for the environment panel.
FRAMEWORKS = (
    "django",
    "flask",
    "fastapi",
    "starlette",
    "aiohttp",
    "bottle",
    "falcon",
    "pyramid",
    "sanic",
    "tornado",
    "quart",
    "litestar",
    "react",
    "vue",
    "angular",
    "nextjs",
    "svelte",
    "express",
)


class FrameView(TypedDict):
    """One frame as the page shows it (:func:`exceptions`)."""

    filename: str
    abs_path: str
    module: str
    package: str
    instruction_addr: str
    function: str
    lineno: int | None
    colno: int | None
    in_app: bool
    args: list[tuple[str, str]]
    vars: list[tuple[str, str]]
    pre_context: list[str]
    context_line: str | None
    post_context: list[str]
    # Set by stacklens.sourcemaps.symbolicate: the minified position and name of a frame a source map
    # resolved (and how it found the map), or why it could not.
    minified: NotRequired[str]
    minified_function: NotRequired[str]
    sourcemap_via: NotRequired[str]
    sourcemap_note: NotRequired[str]


class ExceptionView(TypedDict):
    """One exception of the chain with its frames, top (where it occurred) first."""

    type: str
    value: str
    frames: list[FrameView]


class RequestView(TypedDict):
    """The request panel; ``body`` is the JSON the client sent (``body_is_json``) or its text."""

    url: str
    method: str
    headers: list[tuple[str, str]]
    query: list[tuple[str, str]]
    body: Payload | list[Any] | str
    body_is_json: bool


class UserInfo(TypedDict):
    id: str
    email: str
    name: str
    ip_address: str


class TimeNote(TypedDict):
    """Why the event is stored under its receive time: the time it was sent with, why that was replaced, and
    the time it is stored under."""

    sent: str
    why: str
    stored: str


class Breadcrumb(TypedDict):
    time: str
    category: str
    level: str
    message: str


class EnvironmentInfo(TypedDict):
    runtime: str
    framework: str
    os: str
    server: str
    memory: str


def _dict(value: Any) -> Payload:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    items = value.get("values") if isinstance(value, dict) else value  # Sentry's {"values": [...]} or a list
    return items if isinstance(items, list) else []


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def _pairs(value: Any) -> list[tuple[str, str]]:
    """Headers, tags and query strings arrive as a dict, a list of pairs or (query) a string."""
    if isinstance(value, dict):
        return [(str(k), _text(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [(str(p[0]), _text(p[1])) for p in value if isinstance(p, list | tuple) and len(p) == 2]
    if isinstance(value, str):
        return parse_qsl(value, keep_blank_values=True)
    return []


def load_payload(raw: str) -> Payload:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _frame(frame: Payload, rules: InAppRules, platform: str) -> FrameView:
    """One frame as the page shows it, whatever the platform: a file (Python, JavaScript, .NET), a module
    (Java, Kotlin), or a package and an address (native, Cocoa). In-app or vendor as ingest infers it for
    the culprit (the SDK's flag, else where the code lives; the project's prefixes first)."""
    variables = _dict(frame.get("vars"))
    package = _text(frame.get("package"))
    where = frame.get("filename") or frame.get("abs_path") or frame.get("module")
    if not where and package:
        where = re.split(r"[\\/]", package)[-1]
    return {
        "filename": _text(where or "?"),
        "abs_path": _text(frame.get("abs_path")),
        "module": _text(frame.get("module")),
        "package": package,
        "instruction_addr": _text(frame.get("instruction_addr")),
        "function": _text(frame.get("function") or frame.get("symbol") or "?"),
        "lineno": frame.get("lineno") if isinstance(frame.get("lineno"), int) else None,
        "colno": frame.get("colno") if isinstance(frame.get("colno"), int) else None,
        "in_app": frame_in_app(frame, rules, platform),
        "args": [(str(k), _text(v)) for k, v in _dict(frame.get("args")).items()],
        "vars": [(str(k), _text(v)) for k, v in variables.items()],
        "pre_context": [_text(x) for x in _list(frame.get("pre_context"))],
        "context_line": _text(frame.get("context_line")) if frame.get("context_line") is not None else None,
        "post_context": [_text(x) for x in _list(frame.get("post_context"))],
    }


def _frames(frames: list[Payload], rules: InAppRules, platform: str) -> list[FrameView]:
    """Top (where it occurred) first: Sentry lists the oldest call first."""
    return [_frame(f, rules, platform) for f in reversed(frames)]


def message_text(payload: Payload) -> str:
    """The event's message as a person reads it: ``logentry.formatted``, else the template with its params,
    else ``message`` (a string, or an object with ``formatted`` / ``message``); never raw JSON."""
    logentry = _dict(payload.get("logentry"))
    message = payload.get("message")
    for source in (logentry, _dict(message)):
        if isinstance(source.get("formatted"), str) and source["formatted"]:
            return str(source["formatted"])
        template = source.get("message")
        if isinstance(template, str) and template:
            params = source.get("params")
            try:
                if isinstance(params, list) and params:
                    return template % tuple(params)
                if isinstance(params, dict) and params:
                    return template % params
            except (TypeError, ValueError, KeyError):
                pass
            return template
    return message if isinstance(message, str) else ""


def exceptions(payload: Payload, rules: InAppRules = NO_RULES) -> list[ExceptionView]:
    """The exception chain, the raised one first, each with frames top (where it occurred) first.

    An exception without frames shows the stack of the thread it was raised on (native crashes); an event
    without exception shows its message and the stack it carries (a thread's or a top-level one).
    ``rules`` are the project's in-app prefixes.
    """
    platform = _text(payload.get("platform"))
    chain: list[ExceptionView] = []
    values = [_dict(exc) for exc in _list(payload.get("exception"))]
    for exc in reversed(values):
        frames = _frames(frames_of(exc), rules, platform)
        chain.append(
            {"type": _text(exc.get("type") or "Error"), "value": _text(exc.get("value")), "frames": frames}
        )
    if chain and not any(item["frames"] for item in chain):
        chain[0]["frames"] = _frames(stack_frames(payload), rules, platform)
    if not chain:
        frames = _frames(stack_frames(payload), rules, platform)
        message = message_text(payload)
        if frames or message:
            chain.append(
                {"type": _text(payload.get("level") or "message"), "value": message, "frames": frames}
            )
    return chain


def request_data(payload: Payload) -> RequestView | None:
    request = _dict(payload.get("request"))
    if not request:
        return None
    headers = [
        (k, FILTERED if k.lower() in ALWAYS_FILTERED_HEADERS else v)
        for k, v in _pairs(request.get("headers"))
    ]
    body = request.get("data")
    return {
        "url": _text(request.get("url")),
        "method": _text(request.get("method")),
        "headers": headers,
        "query": _pairs(request.get("query_string")),
        "body": body if isinstance(body, dict | list) else _text(body),
        "body_is_json": isinstance(body, dict | list),
    }


def user_info(payload: Payload) -> UserInfo | None:
    """Only when the event identifies its user."""
    user = _dict(payload.get("user"))
    info: UserInfo = {
        "id": _text(user.get("id")),
        "email": _text(user.get("email")),
        "name": _text(user.get("name") or user.get("username")),
        "ip_address": _text(user.get("ip_address")),
    }
    return info if any(info.values()) else None


def _when(value: Any) -> str:
    """One format for every SDK: Python sends ISO 8601 text, JavaScript epoch seconds."""
    moment: datetime | None = None
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            moment = datetime.fromtimestamp(float(value), UTC)
        except (OverflowError, OSError, ValueError):
            return ""
    elif isinstance(value, str) and value:
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return value
        moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] if moment else ""


def _crumb_message(category: str, message: Any, data: Payload) -> str:
    """What a person reads: the message, else the data in words (``/ → /cart``, ``GET /api → 500``)."""
    if message not in (None, ""):
        return _text(message)
    if category == "navigation" and ("from" in data or "to" in data):
        return f"{_text(data.get('from'))} → {_text(data.get('to'))}"
    if "url" in data and (category.startswith("http") or category in ("fetch", "xhr")):
        words = " ".join(_text(data[k]) for k in ("method", "url") if data.get(k))
        status = data.get("status_code")
        return f"{words} → {_text(status)}" if status not in (None, "") else words
    return ", ".join(f"{key}={_text(value)}" for key, value in data.items())


# The Relay-style entries ingest adds to ``errors`` when it stores an event under its receive time
# (stacklens/ingest/clock.py), and why, in the reader's words.
_REPLACED_TIME = {
    "past_timestamp": "older than this service keeps events (its retention, less a day)",
    "future_timestamp": "more than a minute ahead of the service's clock",
    "invalid_timestamp": "not a time the service could read",
}


def time_note(payload: Payload) -> TimeNote | None:
    """The note for an event stored under its receive time instead of the time it was sent with."""
    for entry in _list(payload.get("errors")):
        if isinstance(entry, dict) and entry.get("type") in _REPLACED_TIME:
            return {
                "sent": _when(entry.get("value")),
                "why": _REPLACED_TIME[str(entry["type"])],
                "stored": _text(entry.get("server_time")),
            }
    return None


def breadcrumbs(payload: Payload) -> list[Breadcrumb]:
    crumbs: list[Breadcrumb] = []
    for crumb in _list(payload.get("breadcrumbs")):
        crumb = _dict(crumb)
        category = _text(crumb.get("category") or crumb.get("type") or "default")
        crumbs.append(
            {
                "time": _when(crumb.get("timestamp")),
                "category": category,
                "level": _text(crumb.get("level") or "info"),
                "message": _crumb_message(category, crumb.get("message"), _dict(crumb.get("data"))),
            }
        )
    crumbs.sort(key=lambda c: c["time"])
    return crumbs


def breadcrumb_categories(crumbs: list[Breadcrumb]) -> list[str]:
    """The filter's choices: the spec's categories, then other top-level ones the event has (``ui.click``
    is filtered under ``ui``)."""
    seen = list(BREADCRUMB_CATEGORIES)
    for crumb in crumbs:
        top = crumb["category"].split(".", 1)[0]
        if top and top not in seen:
            seen.append(top)
    return seen


def tags(payload: Payload, row: EventRow) -> list[tuple[str, str]]:
    """Default tags first (environment, release, server name; browser and OS for JavaScript), then custom ones."""
    contexts = _dict(payload.get("contexts"))
    found: dict[str, str] = {}
    for key, value in (
        ("environment", row.get("environment") or payload.get("environment")),
        ("release", row.get("release") or payload.get("release")),
        ("server_name", payload.get("server_name")),
    ):
        if value:
            found[key] = _text(value)
    if _text(payload.get("platform")) in ("javascript", "node"):
        for key in ("browser", "os"):
            ctx = _dict(contexts.get(key))
            if ctx.get("name"):
                found[key] = " ".join(_text(x) for x in (ctx.get("name"), ctx.get("version")) if x)
    for key, value in _pairs(payload.get("tags")):
        found.setdefault(key, value)
    return list(found.items())


def environment_info(payload: Payload) -> EnvironmentInfo:
    """Runtime, framework, OS, server and memory from the contexts the SDKs send (``runtime``, ``os``,
    ``device``, ``app``, ``browser``); for a browser event the browser is the runtime, and the request's
    User-Agent fills what the contexts leave out."""
    contexts = _dict(payload.get("contexts"))

    def name_version(key: str) -> str:
        ctx = _dict(contexts.get(key))
        if ctx.get("name"):
            return " ".join(_text(x) for x in (ctx.get("name"), ctx.get("version")) if x)
        return _text(ctx.get("raw_description") or ctx.get("kernel_version") or "")

    headers = dict(_pairs(_dict(payload.get("request")).get("headers")))
    agent = next((v for k, v in headers.items() if k.lower() == "user-agent"), "")
    ua_browser, ua_browser_version, ua_os, ua_os_version = parse_user_agent(agent)
    runtime = name_version("runtime") or name_version("browser")
    if not runtime and ua_browser not in ("", "Other"):
        runtime = f"{ua_browser} {ua_browser_version}".strip()
    os_name = name_version("os")
    if not os_name and ua_os not in ("", "Other"):
        os_name = f"{ua_os} {ua_os_version}".strip()
    framework = name_version("framework")
    if not framework:
        integrations = [str(i).lower() for i in _list(_dict(payload.get("sdk")).get("integrations"))]
        framework = next((i for i in integrations if i in FRAMEWORKS), "")
    if not framework:
        sdk_name = _text(_dict(payload.get("sdk")).get("name"))  # e.g. sentry.javascript.react
        flavour = sdk_name.rsplit(".", 1)[-1] if sdk_name.startswith("sentry.javascript.") else ""
        framework = flavour.capitalize() if flavour and flavour not in ("browser", "node") else ""
    device, app = _dict(contexts.get("device")), _dict(contexts.get("app"))
    memory = device.get("memory_size") or app.get("app_memory") or device.get("free_memory")
    return {
        "runtime": runtime,
        "framework": framework,
        "os": os_name,
        "server": _text(payload.get("server_name")),
        "memory": _memory(memory),
    }


def _memory(value: Any) -> str:
    if isinstance(value, int | float) and value > 0:
        return f"{value / 1024 / 1024:,.0f} MiB"
    return _text(value)


def copy_text(chain: list[ExceptionView]) -> str:
    """Type, message and stack as plain text (the Copy error action)."""
    lines = []
    for exc in chain:
        lines.append(f"{exc['type']}: {exc['value']}")
        for frame in exc["frames"]:
            where = (
                f"{frame['filename']}:{frame['lineno']}" if frame["lineno"] is not None else frame["filename"]
            )
            lines.append(f"  at {frame['function']} ({where})")
    return "\n".join(lines)


def _texts(view: UserInfo | EnvironmentInfo) -> dict[str, str]:
    """A view whose values are all text, as lines of the comparison."""
    return {key: str(value) for key, value in view.items()}


# Frames compared per event: a recursion's depth is seen long before this (the demo's recommendations recurse to
# a depth of at most ~40), and a page of 200 rows per side says nothing more.
COMPARED_FRAMES = 60


def _where(frame: FrameView) -> str:
    line = f":{frame['lineno']}" if frame["lineno"] is not None else ""
    return f"{frame['function']} ({frame['filename']}{line}){'' if frame['in_app'] else ' · vendor'}"


def _stack_sections(payload: Payload) -> dict[str, dict[str, str]]:
    """The raised exception's frames, top (where it occurred) first, row by row — so two events of one issue
    that reached the error through different call paths or recursion depths differ where they differ — and
    each frame's local variables under ``#n function: name``."""
    chain = exceptions(payload)
    raised = chain[0] if chain else None
    frames = raised["frames"] if raised else []
    stack: dict[str, str] = {}
    if raised:
        stack["exception"] = f"{raised['type']}: {raised['value']}" if raised["value"] else raised["type"]
        stack["frames"] = str(len(frames))
    for n, frame in enumerate(frames[:COMPARED_FRAMES], start=1):
        stack[f"#{n}"] = _where(frame)
    if len(frames) > COMPARED_FRAMES:
        stack[f"#{COMPARED_FRAMES + 1}…"] = f"{len(frames) - COMPARED_FRAMES} more frames"
    local: dict[str, str] = {}
    for n, frame in enumerate(frames[:COMPARED_FRAMES], start=1):
        for name, value in frame["vars"]:
            local[f"#{n} {frame['function']}: {name}"] = value
    return {"Stack trace": stack, "Local variables": local}


def compare_view(payload: Payload, row: EventRow) -> dict[str, dict[str, str]]:
    """Flat sections for the side-by-side comparison of two events: the stack trace frame by frame and the
    frames' local variables first (what tells two events of one issue apart), then request, user, environment
    and custom data."""
    request = request_data(payload)
    user = user_info(payload)
    return {
        **_stack_sections(payload),
        "Request": {
            "URL": request["url"] if request else "",
            "Method": request["method"] if request else "",
            **{f"Header {k}": v for k, v in (request["headers"] if request else [])},
            **{f"Query {k}": v for k, v in (request["query"] if request else [])},
            "Body": _text(request["body"] if request else ""),
        },
        "User": _texts(user) if user else {},
        "Environment": {
            "environment": _text(row.get("environment")),
            "release": _text(row.get("release")),
            **_texts(environment_info(payload)),
        },
        "Custom data": {
            **{f"tag {k}": v for k, v in _pairs(payload.get("tags"))},
            **{f"extra {k}": _text(v) for k, v in _dict(payload.get("extra")).items()},
        },
    }
