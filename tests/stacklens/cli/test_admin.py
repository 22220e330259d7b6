from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from stacklens.cli.main import main
from stacklens.control.auth import resolve_app_key, verify_api_key
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from tests.conftest import TEST_SECRET

REPO = Path(__file__).resolve().parents[3]


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_admin_commands_print_the_documented_json(control_settings: Settings, capsys) -> None:
    org = run_json(
        capsys,
        "admin",
        "create-org",
        "--name",
        "Acme",
        "--owner-email",
        "o@acme.test",
        "--password",
        "password-1",
        "--json",
    )
    assert set(org) == {"org_id", "api_key"}
    project = run_json(
        capsys,
        "admin",
        "create-project",
        "--org",
        "Acme",
        "--name",
        "Web Shop",
        "--platform",
        "javascript",
        "--json",
    )
    assert set(project) == {"project_id", "slug", "app_key"} and project["slug"] == "web-shop"
    service = run_json(
        capsys, "admin", "create-app-key", "--project", "web-shop", "--service", "worker", "--json"
    )
    assert service["service"] == "worker" and service["app_key"].startswith("stacklens_app_worker_")
    api = run_json(capsys, "admin", "regenerate-api-key", "--org", "Acme", "--json")
    primary = run_json(capsys, "admin", "regenerate-app-key", "--project", "web-shop", "--json")
    worker = run_json(
        capsys, "admin", "regenerate-app-key", "--project", "web-shop", "--service", "worker", "--json"
    )
    assert set(api) == {"api_key"} and set(primary) == {"app_key"} and set(worker) == {"app_key"}
    quota = run_json(capsys, "admin", "set-quota", "--org", "Acme", "--events-per-minute", "5000", "--json")
    assert quota["events_per_minute"] == 5000
    with session_scope(control_settings) as session:
        assert verify_api_key(session, org["api_key"]) is None
        identity = verify_api_key(session, api["api_key"])
        assert identity.org_id == org["org_id"] and identity.events_per_minute == 5000
        assert resolve_app_key(session, org["org_id"], project["app_key"]) is None
        assert resolve_app_key(session, org["org_id"], primary["app_key"]).project_id == project["project_id"]
        assert resolve_app_key(session, org["org_id"], worker["app_key"]).service == "worker"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["admin", "create-project", "--org", "Nope", "--name", "X"], "no organization named 'Nope'"),
        (
            ["admin", "create-app-key", "--project", "nope", "--service", "worker"],
            "no project with slug 'nope'",
        ),
        (["admin", "regenerate-api-key", "--org", "Nope"], "no organization named 'Nope'"),
        (["admin", "set-quota", "--org", "Acme"], "needs --events-per-minute"),
        (["admin", "set-quota", "--org", "Acme", "--events-per-minute", "-3"], "events-per-minute must be"),
        (
            [
                "admin",
                "create-org",
                "--name",
                "Acme",
                "--owner-email",
                "x@y.test",
                "--password",
                "password-1",
            ],
            "already exists",
        ),
        (
            ["admin", "create-org", "--name", "B", "--owner-email", "bad", "--password", "password-1"],
            "invalid e-mail",
        ),
        (
            ["admin", "create-project", "--org", "Acme", "--name", "X", "--platform", "cobol"],
            "unknown platform",
        ),
    ],
)
def test_bad_input_is_one_line_and_nonzero(settings: Settings, capsys, argv, message) -> None:
    main(
        ["admin", "create-org", "--name", "Acme", "--owner-email", "o@acme.test", "--password", "password-1"]
    )
    capsys.readouterr()
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err and "Traceback" not in captured.err


def test_cli_runs_as_a_process_without_a_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("STACKLENS_")}
    env.update(STACKLENS_DATA_DIR=str(tmp_path / "data"), STACKLENS_SECRET_KEY=TEST_SECRET)
    command = [
        sys.executable,
        "-m",
        "stacklens.cli.main",
        "admin",
        "create-org",
        "--name",
        "Proc",
        "--owner-email",
        "p@proc.test",
        "--password",
        "password-1",
        "--json",
    ]
    first = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["api_key"].startswith("stacklens_api_")
    again = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert again.returncode == 2
    assert again.stderr.strip() == "stacklens: an organization named 'Proc' already exists"
    assert not (tmp_path / "data" / "warehouse").exists()  # control-store commands never open the warehouse


def test_set_owner_restores_an_owner_and_refuses_non_members(control_settings: Settings, capsys) -> None:
    from sqlalchemy import select, update

    from stacklens.control import accounts
    from stacklens.control.activity import actor_labels, list_activity
    from stacklens.control.models import ActivityEntry, Membership

    org = run_json(
        capsys,
        "admin",
        "create-org",
        "--name",
        "Acme Corp",
        "--owner-email",
        "o@acme.test",
        "--password",
        "password-1",
        "--json",
    )
    org_id = org["org_id"]
    with session_scope(control_settings) as session:
        accounts.add_member(session, org_id, "m@acme.test", "password-2")
        # The state the race used to leave: nobody is an owner any more.
        session.execute(update(Membership).where(Membership.org_id == org_id).values(role="member"))

    def refused(*argv: str) -> str:
        assert main(["admin", "set-owner", *argv]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and captured.err.count("\n") == 1
        return captured.err

    # Not a member: said plainly, with the way forward (nobody can invite them while there is no owner).
    message = refused("--org", "acme-corp", "--email", "stranger@acme.test")
    assert "stranger@acme.test is not a member of Acme Corp, which has no owner to invite them" in message
    assert "make one of its members an owner first (m@acme.test, o@acme.test)" in message
    assert "no organization named 'Nope'" in refused("--org", "Nope", "--email", "m@acme.test")
    assert "invalid e-mail" in refused("--org", "Acme Corp", "--email", "not-an-email")

    restored = run_json(
        capsys, "admin", "set-owner", "--org", "acme-corp", "--email", "M@Acme.test", "--json"
    )
    assert restored == {
        "org_id": org_id,
        "email": "m@acme.test",
        "role": "owner",
        "previous_role": "member",
        "changed": True,
    }
    # Already an owner (by name this time, plain output): nothing changes and nothing more is logged.
    assert main(["admin", "set-owner", "--org", "Acme Corp", "--email", "m@acme.test"]) == 0
    assert "changed: False" in capsys.readouterr().out
    # With an owner again, a stranger is told who can invite them.
    message = refused("--org", "Acme Corp", "--email", "stranger@acme.test")
    assert "an owner (m@acme.test) or admin invites them on Settings → Members" in message

    with session_scope(control_settings) as session:
        roles = {user.email: role for user, role in accounts.list_members(session, org_id)}
        assert roles == {"m@acme.test": "owner", "o@acme.test": "member"}
        entries = session.scalars(
            select(ActivityEntry).where(ActivityEntry.action == "member.role_changed")
        ).all()
        assert [(e.actor_user_id, e.detail["email"], e.detail["to"]) for e in entries] == [
            (None, "m@acme.test", "owner")
        ]
        rows, _ = list_activity(session, org_id)
        changed = [row for row in rows if row.action == "member.role_changed"]
        assert actor_labels(session, changed) == {changed[0].id: "command line"}


def test_set_role_gives_each_of_the_four_roles(control_settings: Settings, capsys) -> None:
    from stacklens.control import accounts

    org = run_json(capsys, "admin", "create-org", "--name", "Roles", "--owner-email", "o@roles.test",
                   "--password", "password-1", "--json")  # fmt: skip
    with session_scope(control_settings) as session:
        accounts.add_member(session, org["org_id"], "m@roles.test", "password-2")
    for role, previous in (
        ("viewer", "member"),
        ("admin", "viewer"),
        ("owner", "admin"),
        ("member", "owner"),
    ):
        answer = run_json(capsys, "admin", "set-role", "--org", "roles", "--email", "m@roles.test",
                          "--role", role, "--json")  # fmt: skip
        assert answer == {
            "org_id": org["org_id"],
            "email": "m@roles.test",
            "role": role,
            "previous_role": previous,
            "changed": True,
        }
    # An unknown role is refused by the parser (its choices named); the last owner stays one.
    with pytest.raises(SystemExit):
        main(["admin", "set-role", "--org", "Roles", "--email", "m@roles.test", "--role", "superuser"])
    assert (
        "invalid choice: 'superuser' (choose from 'owner', 'admin', 'member', 'viewer')"
        in capsys.readouterr().err
    )
    assert main(["admin", "set-role", "--org", "Roles", "--email", "o@roles.test", "--role", "viewer"]) == 2
    assert "o@roles.test is the only owner" in capsys.readouterr().err


def test_set_retention_changes_days_and_caps_each_alone(control_settings: Settings, capsys) -> None:
    run_json(capsys, "admin", "create-org", "--name", "Keep", "--owner-email", "o@keep.test",
             "--password", "password-123", "--json")  # fmt: skip
    run_json(capsys, "admin", "create-project", "--org", "Keep", "--name", "Shop", "--json")
    capped = run_json(
        capsys, "admin", "set-retention", "--project", "shop", "--max-events-per-issue", "1000", "--json"
    )
    assert (capped["days"], capped["max_events_per_issue"], capped["max_events_per_project"]) == (
        None,
        1000,
        None,
    )
    days = run_json(capsys, "admin", "set-retention", "--project", "shop", "--days", "30", "--json")
    assert (days["days"], days["max_events_per_issue"]) == (30, 1000)  # a cap left out stays
    lifted = run_json(
        capsys, "admin", "set-retention", "--project", "shop", "--max-events-per-issue", "0",
        "--max-events-per-project", "50000", "--json",
    )  # fmt: skip
    assert (lifted["days"], lifted["max_events_per_issue"], lifted["max_events_per_project"]) == (
        30,
        None,
        50000,
    )
    assert main(["admin", "set-retention", "--project", "shop"]) == 2
    assert "give --days, --max-events-per-issue or --max-events-per-project" in capsys.readouterr().err
    assert main(["admin", "set-retention", "--project", "shop", "--max-events-per-project", "-1"]) == 2
    assert "max_events_per_project: must be from 1 to 100,000,000" in capsys.readouterr().err
