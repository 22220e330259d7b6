from __future__ import annotations

import stat
from pathlib import Path

import pytest
from pydantic import ValidationError

from stacklens.cli.main import main
from stacklens.settings import SECRET_FILE_NAME, Settings, SettingsError


def test_secret_is_generated_once_into_the_data_dir_0600(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    first = settings.secret()
    path = tmp_path / "data" / SECRET_FILE_NAME
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(first) >= 32
    assert Settings(data_dir=tmp_path / "data").secret() == first


@pytest.mark.parametrize("value", ["changeme", "secret", "  TODO ", "short"])
def test_placeholder_secret_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValidationError, match="STACKLENS_SECRET_KEY is a placeholder"):
        Settings(data_dir=tmp_path, secret_key=value)


def test_placeholder_secret_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / SECRET_FILE_NAME).write_text("changeme\n")
    with pytest.raises(SettingsError, match="delete it to have a new one generated"):
        Settings(data_dir=tmp_path).secret()


def test_cli_reports_a_placeholder_secret_in_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from stacklens.settings import override_settings

    override_settings(None)
    monkeypatch.setenv("STACKLENS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("STACKLENS_SECRET_KEY", "changeme")
    assert main(["demo-org", "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "STACKLENS_SECRET_KEY is a placeholder" in err and "Traceback" not in err


def test_defaults_derive_from_the_data_dir(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    assert settings.resolved_database_url == f"sqlite:///{tmp_path}/control.db"
    assert settings.resolved_warehouse_url == f"chdb://{tmp_path}/warehouse"
    assert settings.redis_url is None
