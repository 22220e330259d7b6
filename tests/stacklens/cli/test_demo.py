from __future__ import annotations

import json

from stacklens.agents.tokens import resolve
from stacklens.cli.main import main
from stacklens.control.accounts import authenticate_user
from stacklens.control.auth import resolve_app_key, verify_api_key
from stacklens.control.db import session_scope
from stacklens.settings import Settings


def test_demo_org_is_idempotent_and_its_keys_work(control_settings: Settings, capsys) -> None:
    assert main(["demo-org", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert set(first) == {"organization", "email", "password", "api_key", "project", "app_key", "agent_token"}
    assert main(["demo-org", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == first
    with session_scope(control_settings) as session:
        identity = verify_api_key(session, first["api_key"])
        assert identity is not None and identity.org_name == first["organization"]
        assert resolve_app_key(session, identity.org_id, first["app_key"]) is not None
        assert authenticate_user(session, first["email"], first["password"]) is not None
        agent = resolve(session, first["agent_token"])  # the printed agent token works at /mcp
        assert agent.email == first["email"] and agent.scopes == frozenset({"read"})


def test_demo_org_after_regeneration_prints_the_current_keys(control_settings: Settings, capsys) -> None:
    main(["demo-org", "--json"])
    first = json.loads(capsys.readouterr().out)
    main(["admin", "regenerate-api-key", "--org", first["organization"], "--json"])
    regenerated = json.loads(capsys.readouterr().out)["api_key"]
    main(["demo-org", "--json"])
    assert json.loads(capsys.readouterr().out)["api_key"] == regenerated
