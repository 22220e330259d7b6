"""Annotations (docs/explore.md): what happened at a time that the SDKs cannot see — a deploy from CI, a
feature
flag, a campaign — in Grafana's shape ``{"time", "text", "tags", "project", "release"}``. Posted by ``POST
/api/annotations`` and ``stacklens annotate``, listed and deleted on the dashboards page, drawn on the time
charts beside the releases' first-seen markers (:mod:`stacklens.markers`).

An annotation belongs to one project, or (``project`` empty) to the whole organization; every read and
write is within the organization (another organization's id answers as a missing one)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from stacklens.control.models import Annotation, Project
from stacklens.errors import InvalidInput, NotFound

FIELDS = ("time", "text", "tags", "project", "release")
MAX_TEXT = 500
MAX_TAGS = 10
MAX_TAG = 64
MAX_RELEASE = 200
MAX_PER_ORG = 10_000  # a CI posting a deploy an hour for a year; older ones are the user's to delete
MAX_LISTED = 500
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


class BadAnnotation(InvalidInput):
    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.field = name


@dataclass(frozen=True)
class Note:
    id: int
    time: datetime
    text: str
    tags: list[str]
    project: str  # slug, '' = the organization
    release: str
    created_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "time": _iso(self.time),
            "text": self.text,
            "tags": list(self.tags),
            "project": self.project,
            "release": self.release,
            "created_at": _iso(self.created_at),
        }


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _string(name: str, value: object, most: int) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadAnnotation(name, "must be a string")
    value = value.strip()
    if len(value) > most:
        raise BadAnnotation(name, f"at most {most:,} characters")
    if any(ord(ch) < 32 for ch in value):
        raise BadAnnotation(name, "control characters are not allowed")
    return value


def _time(value: object, now: datetime) -> datetime:
    if value in (None, ""):
        return now
    if isinstance(value, int | float) and not isinstance(value, bool):  # Grafana sends epoch milliseconds
        try:
            return datetime.fromtimestamp(value / 1000, UTC)
        except (OverflowError, ValueError, OSError):
            raise BadAnnotation("time", "epoch milliseconds out of range") from None
    if not isinstance(value, str):
        raise BadAnnotation("time", "must be an ISO 8601 time (or epoch milliseconds)")
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text[-1:] in ("Z", "z") else text)
    except ValueError:
        raise BadAnnotation(
            "time", f"{value[:64]!r} is not an ISO 8601 time such as 2026-11-20T12:00:00Z"
        ) from None
    parsed = parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    if not EARLIEST <= parsed <= now + timedelta(days=366):
        raise BadAnnotation("time", "must lie between 1970 and a year from now")
    return parsed.astimezone(UTC)


def _slugs(session: Session, org_id: int) -> dict[int, str]:
    return {
        int(i): s
        for i, s in session.execute(select(Project.id, Project.slug).where(Project.org_id == org_id))
    }


def create_annotation(session: Session, org_id: int, body: object, now: datetime | None = None) -> Note:
    """Validate and store one annotation; :class:`BadAnnotation` names the first bad field."""
    now = (now or datetime.now(UTC)).astimezone(UTC)
    if not isinstance(body, dict):
        raise BadAnnotation("body", 'must be a JSON object {"time", "text", "tags", "project", "release"}')
    unknown = [k for k in body if k not in FIELDS]
    if unknown:
        raise BadAnnotation(str(unknown[0])[:64], f"unknown field; an annotation takes {', '.join(FIELDS)}")
    text = _string("text", body.get("text"), MAX_TEXT)
    if not text:
        raise BadAnnotation("text", "must not be empty (what happened: 'deploy api 4f2c1a')")
    tags_raw = body.get("tags") or []
    if isinstance(tags_raw, str):
        tags_raw = tags_raw.split(",")
    if not isinstance(tags_raw, list) or len(tags_raw) > MAX_TAGS:
        raise BadAnnotation("tags", f"a list of at most {MAX_TAGS} strings")
    tags = [t for t in (_string(f"tags[{i}]", tag, MAX_TAG) for i, tag in enumerate(tags_raw)) if t]
    slug = _string("project", body.get("project"), 100).lower()
    project_id = None
    if slug:
        project_id = session.scalar(select(Project.id).where(Project.org_id == org_id, Project.slug == slug))
        if project_id is None:
            raise BadAnnotation("project", f"no project {slug!r} in this organization")
    count = session.query(Annotation).filter(Annotation.org_id == org_id).count()
    if count >= MAX_PER_ORG:
        raise BadAnnotation(
            "time", f"an organization keeps at most {MAX_PER_ORG:,} annotations; delete old ones"
        )
    row = Annotation(
        org_id=org_id,
        project_id=project_id,
        time=_time(body.get("time"), now),
        text=text,
        tags=list(dict.fromkeys(tags)),
        release=_string("release", body.get("release"), MAX_RELEASE),
    )
    session.add(row)
    session.flush()
    return _out(row, {project_id: slug} if project_id else {})


def _out(row: Annotation, slugs: dict[int, str]) -> Note:
    project = slugs.get(row.project_id, "") if row.project_id else ""
    return Note(row.id, row.time, row.text, list(row.tags or []), project, row.release, row.created_at)


def list_annotations(
    session: Session,
    org_id: int,
    *,
    project_ids: list[int] | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
) -> list[Note]:
    """The organization's annotations, newest first (at most :data:`MAX_LISTED`); with ``project_ids``
    those of these projects and the organization-wide ones; with ``since``/``until`` those in [since,
    until)."""
    query = select(Annotation).where(Annotation.org_id == org_id)
    if project_ids is not None:
        query = query.where(or_(Annotation.project_id.is_(None), Annotation.project_id.in_(project_ids)))
    if since is not None:
        query = query.where(Annotation.time >= since)
    if until is not None:
        query = query.where(Annotation.time < until)
    slugs = _slugs(session, org_id)
    rows = session.scalars(query.order_by(Annotation.time.desc(), Annotation.id.desc()).limit(MAX_LISTED))
    return [_out(r, slugs) for r in rows]


def delete_annotation(session: Session, org_id: int, annotation_id: int) -> None:
    row = session.get(Annotation, annotation_id)
    if row is None or row.org_id != org_id:
        raise NotFound(f"no annotation {annotation_id} in this organization")
    session.delete(row)
    session.flush()
