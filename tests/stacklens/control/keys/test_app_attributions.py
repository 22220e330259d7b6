"""A line's app key is remembered for a moment, and never past a write of this process: a key revoked or a
project setting saved applies to the next batch; another organization's key never attributes a line."""

from __future__ import annotations

from stacklens.control.db import session_scope
from stacklens.control.keys import app_attributions
from stacklens.control.keys.app_attributions import app_key_attribution
from stacklens.control.keys.lifecycle import revoke_app_key
from stacklens.control.projects_settings import set_replay_enabled
from stacklens.settings import Settings


def test_remembered_until_a_write_or_its_moment_passes(settings: Settings, make_org, monkeypatch) -> None:
    org = make_org("Acme")
    other = make_org("Other")
    key = str(org["app_key"])
    first = app_key_attribution(settings, org["org_id"], key)
    assert first is not None and first.project_id == org["project_id"]
    assert app_key_attribution(settings, org["org_id"], key) is first  # no look-up: nothing changed
    assert app_key_attribution(settings, other["org_id"], key) is None  # not a key of that organization

    with session_scope(settings) as session:
        assert set_replay_enabled(session, org["org_id"], org["project_id"], not first.replay_enabled)
    changed = app_key_attribution(settings, org["org_id"], key)
    assert changed is not None and changed.replay_enabled is not first.replay_enabled

    with session_scope(settings) as session:
        revoke_app_key(session, changed.app_key_id)
    assert app_key_attribution(settings, org["org_id"], key) is None

    # A write by another process is not counted here: the answer lasts a second at most.
    monkeypatch.setattr(app_attributions._attributions, "seconds", 0.0)
    again = str(other["app_key"])
    remembered = app_key_attribution(settings, other["org_id"], again)
    assert remembered is not None and app_key_attribution(settings, other["org_id"], again) is not remembered
