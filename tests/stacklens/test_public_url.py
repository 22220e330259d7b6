"""The one base of every absolute link: STACKLENS_PUBLIC_URL (checked at start) when set, else the address
served; a bad value stops the CLI with one line naming the variable."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from stacklens.cli.main import main
from stacklens.public_url import absolute_link, public_base_url, served_url, serving
from stacklens.settings import Settings


def test_the_address_served_is_the_base_without_a_public_url(tmp_path: Path) -> None:
    plain = Settings(data_dir=tmp_path)
    assert public_base_url(plain) == "http://127.0.0.1:8000"  # STACKLENS_HOST / STACKLENS_PORT
    assert public_base_url(serving(plain, "127.0.0.1", 8310)) == "http://127.0.0.1:8310"
    assert public_base_url(serving(plain, "0.0.0.0", 8310)) == "http://127.0.0.1:8310"
    assert public_base_url(serving(plain, "192.0.2.7", 81)) == "http://192.0.2.7:81"
    assert (
        served_url("::", 8310) == "http://[::1]:8310" and served_url("fd00::5", 80) == "http://[fd00::5]:80"
    )
    assert absolute_link(serving(plain, "127.0.0.1", 8310), "/share/t") == "http://127.0.0.1:8310/share/t"


@pytest.mark.parametrize(
    ("value", "base"),
    [
        ("https://lens.example.test", "https://lens.example.test"),
        ("https://lens.example.test/", "https://lens.example.test"),
        (" http://tools.example.test:8443/stacklens/ ", "http://tools.example.test:8443/stacklens"),
        ("", None),
    ],
)
def test_a_public_url_wins_over_the_address_served(tmp_path: Path, value: str, base: str | None) -> None:
    settings = serving(Settings(data_dir=tmp_path, public_url=value), "127.0.0.1", 8310)
    assert settings.public_url == base
    assert public_base_url(settings) == (base or "http://127.0.0.1:8310")
    assert absolute_link(settings, "/orgs/acme") == (base or "http://127.0.0.1:8310") + "/orgs/acme"


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("lens.example.test", "must be an http(s) URL with a host"),
        ("ftp://lens.example.test", "must be an http(s) URL with a host"),
        ("https://", "must be an http(s) URL with a host"),
        ("https://lens.example.test/?a=1", "must not carry a query or fragment"),
        ("https://lens.example.test/#top", "must not carry a query or fragment"),
        ("https://lens.example.test:99999", "has an invalid port"),
        ("https://ops:s3cret@lens.example.test", "must not carry credentials"),
    ],
)
def test_a_bad_public_url_is_refused_naming_the_variable(tmp_path: Path, value: str, words: str) -> None:
    with pytest.raises(ValidationError, match="STACKLENS_PUBLIC_URL") as caught:
        Settings(data_dir=tmp_path, public_url=value)
    assert words in str(caught.value)
    assert "s3cret" not in caught.value.errors()[0]["msg"]


def test_the_cli_stops_with_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    from stacklens.settings import override_settings

    override_settings(None)
    monkeypatch.setenv("STACKLENS_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("STACKLENS_PUBLIC_URL", "https://lens.example.test/?from=mail")
    assert main(["serve", "--port", "8310"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "setting STACKLENS_PUBLIC_URL" in err and "query or fragment" in err
    override_settings(None)
