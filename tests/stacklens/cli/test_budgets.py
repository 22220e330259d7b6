"""`stacklens budgets list|set|delete|import|export` against the real control store and warehouse."""

from __future__ import annotations

import json

import pytest

from stacklens.cli.main import main
from tests.pipelines.pipeline_seed import client

__all__ = ["client"]  # the warehouse fixture


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
        (["set", "--metric", "cls", "--value", "lots"], "value: must be a number"),
        (["set", "--metric", "cls", "--scope", "checkout", "--value", "0.1"], "scope: must be"),
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


def test_list_shows_value_status_and_samples_and_budget_json_round_trips(
    settings, make_org, capsys, client, tmp_path
) -> None:
    from datetime import UTC, datetime, timedelta

    from tests.stacklens.performance.budget_seed import bucketed, fold, page_loads

    org = make_org("Acme")
    slug = org["project"]
    page_loads(
        client,
        org["org_id"],
        org["project_id"],
        "/checkout",
        datetime.now(UTC) - timedelta(hours=2),
        [3000.0] * 4,
    )
    fold(client, days=1)
    for argv in (
        ["--metric", "load_time_ms", "--scope", "/checkout", "--value", "2000", "--min-samples", "3"],
        ["--metric", "lcp_ms", "--value", "5000", "--min-samples", "3", "--window", "14"],
        ["--metric", "cls", "--value", "0.1"],
    ):
        run_json(capsys, "budgets", "set", "--project", slug, *argv, "--json")
    listed = run_json(capsys, "budgets", "list", "--project", slug, "--json")["budgets"]
    assert [(b["metric"], b["current_value"], b["samples"], b["status"]) for b in listed] == [
        ("cls", bucketed(0.05), 4, "insufficient_data"),  # 4 samples of the default 20
        ("lcp_ms", bucketed(3000), 4, "pass"),  # equal loads' p75, as the states keep it
        ("load_time_ms", bucketed(3000), 4, "fail"),
    ]
    assert main(["budgets", "list", "--project", slug]) == 0
    text = capsys.readouterr().out
    assert "FAIL" in text and "PASS" in text and "INSUFFICIENT_DATA" in text and "4 samples" in text
    # A route that no page of the project matches is refused, naming the field.
    assert (
        main(["budgets", "set", "--project", slug, "--metric", "cls", "--scope", "/nope", "--value", "1"])
        == 2
    )
    assert "scope: '/nope' matches no page seen" in capsys.readouterr().err

    assert main(["budgets", "export", "--project", slug]) == 0
    out = capsys.readouterr()
    exported = json.loads(out.out)
    assert [e["path"] for e in exported] == ["/*"]  # load time has no Lighthouse budget
    assert "not exported: load_time_ms p75 on /checkout" in out.err
    path = tmp_path / "budget.json"
    path.write_text(json.dumps(exported))
    other = make_org("Other")["project"]
    imported = run_json(capsys, "budgets", "import", "--project", other, str(path), "--json")
    assert imported["created"] == 2 and imported["not_mapped"] == []
    assert {(b["metric"], b["scope"], b["value"]) for b in imported["budgets"]} == {
        ("lcp_ms", "*", 5000.0),
        ("cls", "*", 0.1),
    }
    path.write_text("[{]")
    assert main(["budgets", "import", "--project", other, str(path)]) == 2
    assert "nothing imported: budget.json: is not JSON" in capsys.readouterr().err
