"""An API key's identity is reused while the control store is unchanged, and read again after any commit —
of this process or another — so a regeneration refuses the old key at the next request; on PostgreSQL every
request reads it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import event, update

from stacklens.control import accounts
from stacklens.control.db import dispose_engines, get_engine, migrate_control_store, session_scope
from stacklens.control.keys.api_identities import current_api_key
from stacklens.control.models import Organization
from stacklens.settings import Settings
from tests.conftest import TEST_SECRET, postgres_schema_url

REPO = Path(__file__).resolve().parents[4]


class Reads:
    """Statements the control store's engine runs that read an API key."""

    def __init__(self, settings: Settings) -> None:
        self.count = 0
        self.engine = get_engine(settings)
        event.listen(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, _conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if "FROM api_keys" in statement:
            self.count += 1

    def close(self) -> None:
        if event.contains(self.engine, "before_cursor_execute", self._seen):
            event.remove(self.engine, "before_cursor_execute", self._seen)


@pytest.fixture
def reads(settings: Settings) -> Iterator[Reads]:
    migrate_control_store(settings)
    counter = Reads(settings)
    yield counter
    counter.close()


def _regenerate_elsewhere(settings: Settings, org_id: int) -> str:
    """Regenerate the organization's API key from another process (as the dashboard of a second server or a
    CLI command would); its new key."""
    script = textwrap.dedent(
        f"""
        from stacklens.control.db import session_scope
        from stacklens.control.keys.lifecycle import regenerate_api_key
        from stacklens.settings import Settings
        settings = Settings(data_dir={str(settings.data_dir)!r}, database_url={settings.database_url!r},
                            secret_key={TEST_SECRET!r})
        with session_scope(settings) as session:
            print(regenerate_api_key(session, {org_id}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout.strip().splitlines()[-1]


def test_reused_until_any_commit_then_a_regeneration_elsewhere_refuses_the_old_key(
    settings: Settings, reads: Reads
) -> None:
    with session_scope(settings) as session:
        org, key = accounts.create_organization(session, "Acme", "acme@example.test", "password-123")
    first = current_api_key(settings, key)
    assert first is not None and first.org_id == org.id and reads.count == 1
    for _ in range(50):
        assert current_api_key(settings, key) is first
    assert reads.count == 1, "nothing changed: the identity is not read again"

    # A commit of this process (a quota changed) is seen by the next request.
    with session_scope(settings) as session:
        session.execute(update(Organization).where(Organization.id == org.id).values(requests_per_second=7))
    changed = current_api_key(settings, key)
    assert changed is not None and changed.requests_per_second == 7 and reads.count == 2

    # A regeneration by another process: the very next request refuses the old key, the new one works.
    new_key = _regenerate_elsewhere(settings, org.id)
    assert current_api_key(settings, key) is None
    renewed = current_api_key(settings, new_key)
    assert renewed is not None and renewed.org_id == org.id


def test_an_unknown_key_is_remembered_as_unknown_until_the_store_changes(
    settings: Settings, reads: Reads
) -> None:
    with session_scope(settings) as session:
        accounts.create_organization(session, "Acme", "acme@example.test", "password-123")
    unknown = "stacklens_api_" + "x" * 32
    assert current_api_key(settings, unknown) is None
    assert current_api_key(settings, unknown) is None and reads.count == 1
    with session_scope(settings) as session:
        _, other = accounts.create_organization(session, "Other", "other@example.test", "password-123")
    assert current_api_key(settings, other) is not None  # made after the first answers: read, found


def test_a_disposed_engine_reads_again(settings: Settings, reads: Reads) -> None:
    with session_scope(settings) as session:
        _, key = accounts.create_organization(session, "Acme", "acme@example.test", "password-123")
    assert current_api_key(settings, key) is not None
    reads.close()
    dispose_engines()  # as a restore into a fresh installation, or tests, do
    again = Reads(settings)
    try:
        assert current_api_key(settings, key) is not None and again.count == 1
    finally:
        again.close()


def test_postgres_reads_the_key_on_every_request(tmp_path: Path, postgres_url: str) -> None:
    url, schema = postgres_schema_url(postgres_url)
    settings = Settings(data_dir=tmp_path / "data", secret_key=TEST_SECRET, database_url=url)
    migrate_control_store(settings)
    counter = Reads(settings)
    try:
        with session_scope(settings) as session:
            _, key = accounts.create_organization(session, "Acme", "acme@example.test", "password-123")
        for _ in range(3):
            assert current_api_key(settings, key) is not None
        assert counter.count == 3
    finally:
        counter.close()
        from sqlalchemy import text

        with get_engine(settings).begin() as connection:
            connection.execute(text(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE'))
        dispose_engines()
