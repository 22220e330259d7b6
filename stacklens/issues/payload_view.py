"""Turn a stored (scrubbed) Sentry event payload into the parts of the issue view.

The payload is attacker-controlled JSON of any shape: every accessor tolerates missing keys and wrong types,
and values leave here as plain strings and lists for the templates to escape. Sensitive headers and body
fields were scrubbed at ingest; the view filters ``Authorization`` and ``Cookie`` again so a payload stored
by an older ingest can never show them.

Here: the message, request, user, tags and environment; the exceptions are read in
:mod:`stacklens.issues.payload_exceptions`, the breadcrumbs in :mod:`stacklens.issues.payload_breadcrumbs`,
the two-event comparison in :mod:`stacklens.issues.payload_compare`."""

from __future__ import annotations

import json
from typing import Any, TypedDict
from urllib.parse import parse_qsl

from stacklens.ingest.useragent import parse_user_agent
from stacklens.issues.events import EventRow
from stacklens_contract.words import FILTERED

# A stored payload, or an object inside one: the client's JSON as it was sent (scrubbed), of any shape. It
# stays a plain dict; what leaves this module is typed below.
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


class EnvironmentInfo(TypedDict):
    runtime: str
    framework: str
    os: str
    server: str
    memory: str


def as_dict(value: Any) -> Payload:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    items = value.get("values") if isinstance(value, dict) else value  # Sentry's {"values": [...]} or a list
    return items if isinstance(items, list) else []


def as_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def as_pairs(value: Any) -> list[tuple[str, str]]:
    """Headers, tags and query strings arrive as a dict, a list of pairs or (query) a string."""
    if isinstance(value, dict):
        return [(str(k), as_text(v)) for k, v in value.items()]
    if isinstance(value, list):
        return [(str(p[0]), as_text(p[1])) for p in value if isinstance(p, list | tuple) and len(p) == 2]
    if isinstance(value, str):
        return parse_qsl(value, keep_blank_values=True)
    return []


def load_payload(raw: str) -> Payload:
    try:
        value = json.loads(raw) if raw else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def message_text(payload: Payload) -> str:
    """The event's message as a person reads it: ``logentry.formatted``, else the template with its params,
    else ``message`` (a string, or an object with ``formatted`` / ``message``); never raw JSON."""
    logentry = as_dict(payload.get("logentry"))
    message = payload.get("message")
    for source in (logentry, as_dict(message)):
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


def request_data(payload: Payload) -> RequestView | None:
    request = as_dict(payload.get("request"))
    if not request:
        return None
    headers = [
        (k, FILTERED if k.lower() in ALWAYS_FILTERED_HEADERS else v)
        for k, v in as_pairs(request.get("headers"))
    ]
    body = request.get("data")
    return {
        "url": as_text(request.get("url")),
        "method": as_text(request.get("method")),
        "headers": headers,
        "query": as_pairs(request.get("query_string")),
        "body": body if isinstance(body, dict | list) else as_text(body),
        "body_is_json": isinstance(body, dict | list),
    }


def user_info(payload: Payload) -> UserInfo | None:
    """Only when the event identifies its user."""
    user = as_dict(payload.get("user"))
    info: UserInfo = {
        "id": as_text(user.get("id")),
        "email": as_text(user.get("email")),
        "name": as_text(user.get("name") or user.get("username")),
        "ip_address": as_text(user.get("ip_address")),
    }
    return info if any(info.values()) else None


def tags(payload: Payload, row: EventRow) -> list[tuple[str, str]]:
    """Default tags first (environment, release, server name; browser and OS for JavaScript), then custom
    ones."""
    contexts = as_dict(payload.get("contexts"))
    found: dict[str, str] = {}
    for key, value in (
        ("environment", row.get("environment") or payload.get("environment")),
        ("release", row.get("release") or payload.get("release")),
        ("server_name", payload.get("server_name")),
    ):
        if value:
            found[key] = as_text(value)
    if as_text(payload.get("platform")) in ("javascript", "node"):
        for key in ("browser", "os"):
            ctx = as_dict(contexts.get(key))
            if ctx.get("name"):
                found[key] = " ".join(as_text(x) for x in (ctx.get("name"), ctx.get("version")) if x)
    for key, value in as_pairs(payload.get("tags")):
        found.setdefault(key, value)
    return list(found.items())


def environment_info(payload: Payload) -> EnvironmentInfo:
    """Runtime, framework, OS, server and memory from the contexts the SDKs send (``runtime``, ``os``,
    ``device``, ``app``, ``browser``); for a browser event the browser is the runtime, and the request's
    User-Agent fills what the contexts leave out."""
    contexts = as_dict(payload.get("contexts"))

    def name_version(key: str) -> str:
        ctx = as_dict(contexts.get(key))
        if ctx.get("name"):
            return " ".join(as_text(x) for x in (ctx.get("name"), ctx.get("version")) if x)
        return as_text(ctx.get("raw_description") or ctx.get("kernel_version") or "")

    headers = dict(as_pairs(as_dict(payload.get("request")).get("headers")))
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
        integrations = [str(i).lower() for i in as_list(as_dict(payload.get("sdk")).get("integrations"))]
        framework = next((i for i in integrations if i in FRAMEWORKS), "")
    if not framework:
        sdk_name = as_text(as_dict(payload.get("sdk")).get("name"))  # e.g. sentry.javascript.react
        flavour = sdk_name.rsplit(".", 1)[-1] if sdk_name.startswith("sentry.javascript.") else ""
        framework = flavour.capitalize() if flavour and flavour not in ("browser", "node") else ""
    device, app = as_dict(contexts.get("device")), as_dict(contexts.get("app"))
    memory = device.get("memory_size") or app.get("app_memory") or device.get("free_memory")
    return {
        "runtime": runtime,
        "framework": framework,
        "os": os_name,
        "server": as_text(payload.get("server_name")),
        "memory": _memory(memory),
    }


def _memory(value: Any) -> str:
    if isinstance(value, int | float) and value > 0:
        return f"{value / 1024 / 1024:,.0f} MiB"
    return as_text(value)
