"""What a line's app key stands for when its batch is prepared, remembered for a moment
(:mod:`stacklens.control.remembered`): the key's project and service, and the project's settings that
preparing a line reads (replays kept, in-app rules, merged fingerprints, scrubbing rules).

A shipper may send one line per batch, and every line names its app key: reading the key and its project
from the control store for each batch was two thirds of admitting a one-line batch to `/api/ingest`. An
answer is reused for a second at most, and never past a write of this process to the control store.

Worker processes do not read the control store: the server hands them every current app key of the
organization with what it stands for (:func:`org_app_key_attributions`, by the key's hash), so a worker loads
neither SQLAlchemy nor the control store's models (~33 MiB each)."""

from __future__ import annotations

from dataclasses import replace

from sqlalchemy import select

from stacklens.control.auth import resolve_app_key
from stacklens.control.db import session_scope
from stacklens.control.issue_merges import overrides_of
from stacklens.control.models import AppKey
from stacklens.control.projects_settings import in_app_rules, replay_enabled
from stacklens.control.remembered import Remembered
from stacklens.ingest.prepared_rows import Attribution
from stacklens.scrubbing.store import project_rules
from stacklens.settings import Settings

_attributions: Remembered[tuple[str, int, str], Attribution | None] = Remembered()


def app_key_attribution(settings: Settings, org_id: int, raw: str) -> Attribution | None:
    """The project (and its settings) of the current app key ``raw`` of ``org_id``; ``None`` for anything
    else. Remembered as the module says."""

    def read() -> Attribution | None:
        with session_scope(settings) as session:
            found = resolve_app_key(session, org_id, raw)
            if found is None:
                return None
            replays = replay_enabled(session, found.project_id)
            rules = in_app_rules(session, found.project_id)
            merged = overrides_of(session, found.project_id)
            scrubbing = project_rules(session, found.project_id)
        return Attribution(
            found.project_id, found.service, found.app_key_id, replays, rules, merged, scrubbing
        )

    return _attributions.answer((settings.resolved_database_url, org_id, raw), read)


_org_keys: Remembered[tuple[str, int], dict[str, Attribution]] = Remembered()


def org_app_key_attributions(settings: Settings, org_id: int) -> dict[str, Attribution]:
    """Every current app key of ``org_id`` by its hash (``hash_key``), with what it stands for; a key without
    a service of its own has ``service`` ``None`` (its value names it: ``service_of``). Remembered as the
    module says: what the worker processes resolve a large batch's app keys with."""

    def read() -> dict[str, Attribution]:
        found: dict[str, Attribution] = {}
        with session_scope(settings) as session:
            keys = session.execute(
                select(AppKey.id, AppKey.key_hash, AppKey.project_id, AppKey.service).where(
                    AppKey.org_id == org_id, AppKey.revoked_at.is_(None)
                )
            ).all()
            projects: dict[int, Attribution] = {}
            for key_id, key_hash, project_id, service in keys:
                if project_id not in projects:
                    projects[project_id] = Attribution(
                        project_id,
                        None,
                        0,
                        replay_enabled(session, project_id),
                        in_app_rules(session, project_id),
                        overrides_of(session, project_id),
                        project_rules(session, project_id),
                    )
                found[key_hash] = replace(projects[project_id], service=service, app_key_id=key_id)
        return found

    return _org_keys.answer((settings.resolved_database_url, org_id), read)
