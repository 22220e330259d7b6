"""A monitor's settings from a request body or an SDK's ``monitor_config``: validated column values.

One reader for the three roads a monitor is set up by (the API, the monitor's page, a check-in's
``monitor_config``), so ``"61 * * * *"``, ``"Mars/Olympus"`` or ``checkin_margin: -1`` are refused alike,
naming the field (400). Fields absent from the body keep their current value (``current``), so an SDK's
config that names only the schedule leaves the margin set on the page alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from stacklens.monitors.errors import MonitorInputError
from stacklens.monitors.schedules import parse_schedule, parse_timezone, whole
from stacklens.outbound import AllowList, OutboundRefused, validate_target

KINDS = ("cron", "uptime")
METHODS = ("GET", "HEAD", "POST")
SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_NOT_SLUG = re.compile(r"[^a-z0-9_-]+")

# Sentry's defaults: a minute of margin, 30 minutes of runtime, one failure opens and one success closes.
DEFAULTS: dict[str, Any] = {
    "kind": "cron",
    "schedule_type": "",
    "schedule_value": "",
    "schedule_unit": "",
    "timezone": "UTC",
    "checkin_margin": 1,
    "max_runtime": 30,
    "failure_issue_threshold": 1,
    "recovery_threshold": 1,
    "environment": "",
    "url": "",
    "method": "GET",
    "interval_seconds": 60,
    "timeout_ms": 10_000,
    "expected_status": 200,
    "failure_threshold": 1,
    "paused": False,
}
# Uptime probes run on the schedule runner's tick (every minute in embedded mode); shorter intervals are
# accepted down to 10 s and probed as often as the runner ticks.
MIN_INTERVAL_SECONDS = 10


def slugify(value: str) -> str:
    """What Sentry makes of a monitor name sent by an SDK: lower case, runs of other characters as ``-``."""
    slug = _NOT_SLUG.sub("-", value.strip().lower()).strip("-_")[:64]
    return slug


def clean_slug(value: object, field: str = "slug") -> str:
    if not isinstance(value, str) or not SLUG.match(value):
        raise MonitorInputError(
            field, f"{value!r} is not a slug; use 1-64 lower-case letters, digits, '-' and '_'"
        )
    return value


def clean(
    body: Mapping[str, Any],
    current: Mapping[str, Any] | None,
    allow: AllowList,
    require_schedule: bool = False,
) -> dict[str, Any]:
    """The column values of a monitor: ``current`` (or the defaults) with the body's fields read over them.

    Sentry's API nests the settings under ``config``; both forms are read."""
    nested = body.get("config")
    if nested is not None and not isinstance(nested, dict):
        raise MonitorInputError("config", "must be an object of the monitor's settings")
    fields = {**(nested or {}), **{k: v for k, v in body.items() if k != "config"}}
    values = dict(current or DEFAULTS)
    kind = fields.get("kind", fields.get("type"))
    if kind is not None:
        if current is not None and kind != current["kind"]:
            raise MonitorInputError("kind", f"a {current['kind']} monitor stays {current['kind']}")
        if kind not in KINDS:
            raise MonitorInputError("kind", f"unknown kind {kind!r}; use cron or uptime")
        values["kind"] = kind
    if "schedule" in fields:
        schedule = parse_schedule(fields["schedule"], fields.get("schedule_unit"))
        values.update(schedule_type=schedule.type, schedule_value=schedule.value, schedule_unit=schedule.unit)
    if "timezone" in fields:
        values["timezone"] = parse_timezone(fields["timezone"])
    for field, minimum in (("checkin_margin", 0), ("max_runtime", 1)):
        if field in fields:
            values[field] = whole(fields[field], field, DEFAULTS[field], minimum, 40_320)
    for field in ("failure_issue_threshold", "recovery_threshold"):
        if field in fields:
            values[field] = whole(fields[field], field, 1, 1, 720)
    if "environment" in fields:
        environment = fields["environment"]
        if environment is not None and (not isinstance(environment, str) or len(environment) > 64):
            raise MonitorInputError("environment", "must be text of at most 64 characters")
        values["environment"] = environment or ""
    if "status" in fields or "paused" in fields:
        values["paused"] = _paused(fields)
    if values["kind"] == "uptime":
        _uptime(fields, values, allow)
    elif require_schedule and not values["schedule_type"]:
        raise MonitorInputError("schedule", "a cron monitor needs a schedule (crontab or interval)")
    return values


def _paused(fields: Mapping[str, Any]) -> bool:
    if "paused" in fields:
        paused = fields["paused"]
        if not isinstance(paused, bool):
            raise MonitorInputError("paused", "must be true or false")
        return paused
    status = fields["status"]
    if status not in ("active", "paused", "disabled", "ok", "new"):
        raise MonitorInputError("status", "set it to active or paused")
    return status in ("paused", "disabled")


def _uptime(fields: Mapping[str, Any], values: dict[str, Any], allow: AllowList) -> None:
    if "url" in fields or not values["url"]:
        url = fields.get("url")
        if not isinstance(url, str) or not url.strip():
            raise MonitorInputError("url", "give the http:// or https:// URL to probe")
        if len(url) > 2000:
            raise MonitorInputError("url", "must be at most 2,000 characters")
        try:
            values["url"] = validate_target(url.strip(), allow)
        except OutboundRefused as exc:
            raise MonitorInputError("url", str(exc)) from exc
    if "method" in fields:
        method = fields["method"]
        if not isinstance(method, str) or method.upper() not in METHODS:
            raise MonitorInputError("method", f"use one of {', '.join(METHODS)}")
        values["method"] = method.upper()
    if "interval_seconds" in fields:
        values["interval_seconds"] = whole(
            fields["interval_seconds"], "interval_seconds", 60, MIN_INTERVAL_SECONDS, 86_400
        )
    if "timeout_ms" in fields:
        values["timeout_ms"] = whole(fields["timeout_ms"], "timeout_ms", 10_000, 100, 60_000)
    if "expected_status" in fields:
        values["expected_status"] = whole(fields["expected_status"], "expected_status", 200, 100, 599)
    if "failure_threshold" in fields:
        values["failure_threshold"] = whole(fields["failure_threshold"], "failure_threshold", 1, 1, 100)
