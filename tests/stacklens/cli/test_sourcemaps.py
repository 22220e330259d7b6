"""`stacklens sourcemaps upload` refuses bad input before sending anything, with one line naming the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from stacklens.cli.main import main
from tests.stacklens.sourcemaps.app_bundle import build_app


def test_a_corrupt_map_is_refused_before_upload(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dist = build_app(tmp_path)
    (dist / "app.min.js.map").write_text('{"version": 3, "mappings": "AAAA"')  # cut short
    # No server listens on this port: the refusal comes before any request.
    args = ["sourcemaps", "upload", "--project", "web-app", "--release", "r1", "--url", "http://127.0.0.1:9"]
    assert main([*args, "--api-key", "stacklens_api_x", str(dist)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stacklens: ~/app.min.js.map is not a valid source map: not JSON"), err
    assert main([*args, "--api-key", "stacklens_api_x", str(tmp_path / "missing")]) == 2
    assert "no such file or folder" in capsys.readouterr().err


def test_an_api_key_is_required(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    monkeypatch.delenv("STACKLENS_API_KEY", raising=False)
    assert main(["sourcemaps", "upload", "--project", "p", "--release", "r", str(tmp_path)]) == 2
    assert "--api-key (or STACKLENS_API_KEY) is required" in capsys.readouterr().err
