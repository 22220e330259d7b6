"""`stacklens budgets list|set|delete` against the real control store."""

from __future__ import annotations

import json

import pytest

from stacklens.cli.main import main


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_set_list_delete(settings, make_org, capsys: pytest.CaptureFixture[str]) -> None:
    slug = make_org("Acme")["project"]
    made = run_json(
        capsys,
        "budgets",
        "set",
        "--project",
        slug,
        "--metric",
        "lcp_ms",
        "--scope",
        "/checkout",
        "--value",
        "2500",
        "--json",
    )
    assert made["created"] is True and made["value"] == 2500 and made["scope"] == "/checkout"
    changed = run_json(
        capsys,
        "budgets",
        "set",
        "--project",
        slug,
        "--metric",
        "lcp_ms",
        "--scope",
        "/checkout",
        "--value",
        "2000",
        "--json",
    )
    assert changed["created"] is False and changed["id"] == made["id"] and changed["value"] == 2000
    run_json(
        capsys, "budgets", "set", "--project", slug, "--metric", "js_bytes", "--value", "300000", "--json"
    )
    listed = run_json(capsys, "budgets", "list", "--project", slug, "--json")["budgets"]
    assert [(b["metric"], b["scope"], b["value"]) for b in listed] == [
        ("js_bytes", "*", 300000),
        ("lcp_ms", "/checkout", 2000),
    ]
    assert main(["budgets", "list", "--project", slug]) == 0
    assert "lcp_ms" in capsys.readouterr().out
    assert run_json(capsys, "budgets", "delete", "--project", slug, "--metric", "js_bytes", "--json") == {
        "deleted": True
    }
    assert len(run_json(capsys, "budgets", "list", "--project", slug, "--json")["budgets"]) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["set", "--metric", "speed", "--value", "1"], "unknown metric 'speed'"),
        (["set", "--metric", "cls", "--value", "lots"], "value must be a number"),
        (["set", "--metric", "cls", "--scope", "checkout", "--value", "0.1"], "scope must be"),
        (["delete", "--metric", "cls"], "no cls budget on *"),
    ],
)
def test_bad_input_gets_one_line(settings, make_org, capsys, argv, message) -> None:
    slug = make_org("Acme")["project"]
    assert main(["budgets", *argv, "--project", slug]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]
    assert main(["budgets", "list", "--project", "missing"]) == 2
    assert "no project with slug 'missing'" in capsys.readouterr().err
