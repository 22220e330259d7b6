"""`stacklens annotate` against a real server (uvicorn, the real app): the annotation is stored for the key's
organization and answered back as JSON; a refused one exits 2 with the server's message naming the field;
no key is a plain message."""

from __future__ import annotations

import json

from stacklens.cli.main import main
from stacklens.control.db import session_scope
from stacklens.settings import Settings
from tests.api.live import serve


def test_annotate_posts_to_the_server(settings: Settings, make_org, capsys, monkeypatch) -> None:
    from stacklens.annotations import list_annotations

    acme = make_org("Acme")
    monkeypatch.delenv("STACKLENS_API_KEY", raising=False)
    with serve(settings) as url:
        common = ["annotate", "--url", url, "--api-key", str(acme["api_key"])]
        assert (
            main(
                [
                    *common,
                    "deploy api 4f2c1a",
                    "--tags",
                    "deploy,api",
                    "--project",
                    str(acme["project"]),
                    "--release",
                    "shop@1.4.0",
                    "--time",
                    "2026-11-20T12:00:00Z",
                ]
            )
            == 0
        )
        answer = json.loads(capsys.readouterr().out)
        assert answer["text"] == "deploy api 4f2c1a" and answer["tags"] == ["deploy", "api"]
        assert answer["time"] == "2026-11-20T12:00:00Z" and answer["project"] == acme["project"]
        assert main([*common, "oops", "--project", "nope"]) == 2
        assert "HTTP 400: project: no project 'nope' in this organization" in capsys.readouterr().err
        assert main(["annotate", "--url", url, "x"]) == 2
        assert "API key" in capsys.readouterr().err
    with session_scope(settings) as session:
        rows = list_annotations(session, int(acme["org_id"]))
    assert [(r.text, r.release) for r in rows] == [("deploy api 4f2c1a", "shop@1.4.0")]
