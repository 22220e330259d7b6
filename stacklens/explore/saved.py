"""An organization's saved Explore queries: create, list, read, replace, delete — always within the
organization (another organization's id answers as a missing one)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from stacklens.control.models import utcnow
from stacklens.control.models.explore import SavedQuery
from stacklens.errors import NotFound
from stacklens.explore.query import BadQuery
from stacklens.explore.query_parser import parse_query

MAX_NAME = 200
MAX_DESCRIPTION = 2_000
MAX_SAVED_PER_ORG = 500


@dataclass(frozen=True)
class Saved:
    id: int
    name: str
    description: str
    owner_user_id: int | None
    query: dict[str, Any]
    created_at: datetime
    updated_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "description": self.description,
            "owner_user_id": self.owner_user_id,
            "query": self.query,
            "created_at": self.created_at.isoformat().replace("+00:00", "Z"),
            "updated_at": self.updated_at.isoformat().replace("+00:00", "Z"),
        }


def _out(row: SavedQuery) -> Saved:
    return Saved(
        row.id, row.name, row.description, row.owner_user_id, row.query, row.created_at, row.updated_at
    )


def _fields(body: object) -> tuple[str, str, dict[str, Any]]:
    if not isinstance(body, dict):
        raise BadQuery("body", 'must be a JSON object {"name", "description", "query"}')
    unknown = [k for k in body if k not in ("name", "description", "query")]
    if unknown:
        raise BadQuery(str(unknown[0])[:64], "unknown field; a saved query takes name, description, query")
    name = body.get("name")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
        raise BadQuery("name", f"must be a non-empty string of at most {MAX_NAME} characters")
    description = body.get("description") or ""
    if not isinstance(description, str) or len(description) > MAX_DESCRIPTION:
        raise BadQuery("description", f"must be a string of at most {MAX_DESCRIPTION} characters")
    try:
        query = parse_query(body.get("query")).as_body()
    except BadQuery as exc:
        raise BadQuery(f"query.{exc.field}", str(exc).split(": ", 1)[1]) from None
    return name.strip(), description, query


def _get(session: Session, org_id: int, query_id: int) -> SavedQuery:
    row = session.get(SavedQuery, query_id)
    if row is None or row.org_id != org_id:
        raise NotFound(f"no saved query {query_id} in this organization")
    return row


def list_saved(session: Session, org_id: int) -> list[Saved]:
    rows = session.scalars(select(SavedQuery).where(SavedQuery.org_id == org_id).order_by(SavedQuery.name))
    return [_out(r) for r in rows]


def create_saved(session: Session, org_id: int, body: object, owner_user_id: int | None = None) -> Saved:
    name, description, query = _fields(body)
    if len(list_saved(session, org_id)) >= MAX_SAVED_PER_ORG:
        raise BadQuery("name", f"an organization keeps at most {MAX_SAVED_PER_ORG} saved queries")
    row = SavedQuery(
        org_id=org_id, owner_user_id=owner_user_id, name=name, description=description, query=query
    )
    session.add(row)
    session.flush()
    return _out(row)


def get_saved(session: Session, org_id: int, query_id: int) -> Saved:
    return _out(_get(session, org_id, query_id))


def replace_saved(session: Session, org_id: int, query_id: int, body: object) -> Saved:
    row = _get(session, org_id, query_id)
    row.name, row.description, row.query = _fields(body)
    row.updated_at = utcnow()
    session.flush()
    return _out(row)


def delete_saved(session: Session, org_id: int, query_id: int) -> None:
    session.delete(_get(session, org_id, query_id))
    session.flush()
