"""Reading replays back: the per-project list with its filters, one replay's recording, errors and spans,
and whether an error's "View Replay" can open at the error. Every query names the organization and project."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, TypedDict

import orjson
from clickhouse_connect.driver.client import Client

from stacklens.errors import InvalidInput
from stacklens.ingest.fields import given_event_id
from stacklens.replay.recording import inflate
from stacklens.warehouse.queries import run_query

RANGES = {
    "24h": timedelta(hours=24),
    "7d": timedelta(days=7),
    "14d": timedelta(days=14),
    "30d": timedelta(days=30),
    "90d": timedelta(days=90),
}
LIST_LIMIT = 100
LEAD_SECONDS = 5.0  # "View Replay" opens this long before the error, so the steps that led to it show
COVER_SLACK_SECONDS = 10.0  # an error this soon after the last recorded event is still "covered"


@dataclass(frozen=True)
class ReplayFilters:
    range: str = "7d"
    browser: str = ""
    user: str = ""
    url: str = ""
    errors_only: bool = False
    min_duration: int = 0  # seconds
    release: str = ""  # exactly this release ('' = any): a release page links to its replays

    def checked(self) -> ReplayFilters:
        if self.range not in RANGES:
            raise InvalidInput(f"range must be one of {', '.join(RANGES)}")
        if self.min_duration < 0 or self.min_duration > 86_400:
            raise InvalidInput("min_duration must be a number of seconds from 0 to 86400")
        for name in ("browser", "user", "url", "release"):
            if len(getattr(self, name)) > 200:
                raise InvalidInput(f"{name} must be at most 200 characters")
        return self


def replay_uuid(replay_id: str) -> str | None:
    """The replay id in UUID form, or ``None`` when it is not a 32-digit hex id (the page answers 404)."""
    raw = given_event_id(replay_id)
    return None if raw is None else f"{raw[:8]}-{raw[8:12]}-{raw[12:16]}-{raw[16:20]}-{raw[20:]}"


def list_replays(
    client: Client, org_id: int, project_id: int, filters: ReplayFilters
) -> list[dict[str, Any]]:
    filters = filters.checked()
    since = datetime.now(UTC).replace(tzinfo=None) - RANGES[filters.range]
    return run_query(
        client,
        "replay/list",
        {
            "org_id": org_id,
            "project_id": project_id,
            "since": since,
            "browser": filters.browser,
            "user": filters.user,
            "url": filters.url,
            "errors_only": int(filters.errors_only),
            "min_duration_ms": filters.min_duration * 1000,
            "release": filters.release,
            "limit": LIST_LIMIT,
        },
    )


class ReplaySpan(TypedDict):
    """Where a replay's recording starts, becomes playable (its first full snapshot) and ends (UTC, naive)."""

    started: datetime
    playable_from: datetime
    snapshots: int
    ended: datetime


def _params(org_id: int, project_id: int, replay: str) -> dict[str, Any]:
    return {"org_id": org_id, "project_id": project_id, "replay_id": replay}


def replay_span(client: Client, org_id: int, project_id: int, replay: str) -> ReplaySpan | None:
    """``started``, ``playable_from``, ``snapshots``, ``ended`` of a replay; ``None`` when it has no
    segment."""
    rows = run_query(client, "replay/spans", _params(org_id, project_id, replay))
    # An aggregate over no rows still answers one row, with the epoch for its times.
    if not rows or rows[0]["ended"].year < 1971:
        return None
    row = rows[0]
    return ReplaySpan(
        started=row["started"],
        playable_from=row["playable_from"],
        snapshots=row["snapshots"],
        ended=row["ended"],
    )


def replay_meta(client: Client, org_id: int, project_id: int, replay: str) -> dict[str, Any]:
    rows = run_query(client, "replay/meta", _params(org_id, project_id, replay))
    return rows[0] if rows else {}


USER_LOOKUP = timedelta(days=1)  # the events around a replay that may say who its user id is


def replay_user(
    client: Client, org_id: int, project_id: int, meta: dict[str, Any], span: ReplaySpan
) -> dict[str, str]:
    """Who the replay's user is, as the issue page shows an event's user: ``label`` (the e-mail, else the
    name, else the id, else the IP address; '' for an anonymous user) and ``id`` (the user id, beside a name).
    A replay whose events carry the id alone takes the e-mail and name from the project's events of that id
    around it (the browser SDK's errors carry what ``Sentry.setUser`` gave)."""
    user_id, email, name = (str(meta.get(k) or "") for k in ("given_id", "given_email", "given_name"))
    if user_id and not (email or name):
        rows = run_query(
            client,
            "replay/user_of_id",
            {
                "org_id": org_id,
                "project_id": project_id,
                "user_id": user_id,
                "since": span["started"] - USER_LOOKUP,
                "until": span["ended"] + USER_LOOKUP,
            },
        )
        if rows:
            email, name = str(rows[0]["given_email"] or ""), str(rows[0]["given_name"] or "")
    label = email or name or user_id or str(meta.get("user_label") or "")
    return {"label": label, "id": user_id if user_id and label != user_id else ""}


def recording_json(client: Client, org_id: int, project_id: int, replay: str) -> bytes:
    """Every rrweb event of the replay as one JSON array, segment after segment.

    The segments' JSON texts are spliced, not parsed: a 5-minute session is a few MB of JSON, and the page's
    first frame waits for this answer.
    """
    parts: list[bytes] = []
    for row in run_query(client, "replay/segments", _params(org_id, project_id, replay)):
        text = inflate(base64.b64decode(row["payload"]), row["encoding"]).strip()
        inner = text[1:-1].strip() if text[:1] == b"[" else text
        if inner:
            parts.append(inner)
    return b"[" + b",".join(parts) + b"]"


def replay_marks(client: Client, org_id: int, project_id: int, replay: str) -> list[list[Any]]:
    """Per segment, the ``[epoch ms, kind, label]`` marks ingest kept (:func:`timeline.segment_marks`)."""
    rows = run_query(client, "replay/marks", _params(org_id, project_id, replay))
    return [orjson.loads(row["marks"] or "[]") for row in rows]


def replay_errors(
    client: Client, org_id: int, project_id: int, replay: str, span: ReplaySpan, error_ids: list[str]
) -> list[dict[str, Any]]:
    ids = [i for i in (replay_uuid(e) for e in error_ids) if i]
    return run_query(
        client,
        "replay/errors",
        {
            **_params(org_id, project_id, replay),
            "replay_hex": replay.replace("-", ""),
            "error_ids": ids,
            "since": span["started"] - timedelta(minutes=5),
            "until": span["ended"] + timedelta(minutes=5),
        },
    )


def replay_offset_for(
    client: Client, org_id: int, project_id: int, replay_id: str, error_time: datetime
) -> float | None:
    """Seconds into the replay where "View Replay" opens for an error at ``error_time``, or ``None`` when no
    playable segment covers the error (nothing recorded yet, the snapshot missing, or the error outside)."""
    replay = replay_uuid(replay_id)
    if replay is None:
        return None
    span = replay_span(client, org_id, project_id, replay)
    if span is None or not span["snapshots"]:
        return None
    when = error_time.replace(tzinfo=None)
    playable_from, ended = span["playable_from"], span["ended"]
    if when < playable_from or when > ended + timedelta(seconds=COVER_SLACK_SECONDS):
        return None
    return max(0.0, (when - span["started"]).total_seconds() - LEAD_SECONDS)
