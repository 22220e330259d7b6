"""`stacklens.yaml` validation and the CLI's --validate / --version (real files, real subprocess)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from shipper.config import ConfigError, load_config, parse_duration
from tests.shipper.harness import SHIPPER
from tests.shipper.ingest_server import API_KEY, APP_KEY


def write(tmp_path: Path, fields: dict, mode: int = 0o600, name: str = "stacklens.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump({"stacklens": fields}))
    os.chmod(path, mode)
    return path


def good(tmp_path: Path, **extra: object) -> dict:
    logs = tmp_path / "logs"
    logs.mkdir(exist_ok=True)
    return {
        "apiKey": API_KEY,
        "appKey": APP_KEY,
        "baseUrl": "https://sl.example.com",
        "storagePath": str(logs),
        **extra,
    }


def problems(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return info.value.problems


def test_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, good(tmp_path)))
    assert (config.timeout, config.batch_size, config.flush_interval) == (60.0, 100, 10.0)
    assert (config.compress, config.log_level, config.verbose) == (True, "info", False)
    assert config.max_line_bytes == 1024 * 1024 and config.tracker_path.name == "tracker.json"
    assert config.max_dead_letter_bytes == 64 * 1024 * 1024


@pytest.mark.parametrize(
    ("text", "seconds"), [("500ms", 0.5), ("5s", 5), ("2m", 120), ("1h", 3600), (3, 3.0)]
)
def test_durations(text: object, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"colour": "red"}, "unknown field 'colour'"),
        ({"timeout": "soon"}, "timeout: 'soon' is not a duration"),
        ({"batchSize": 0}, "batchSize 0 is out of range"),
        ({"batchSize": 100000}, "batchSize 100000 is out of range"),
        ({"apiKey": "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6"}, "apiKey must start with the prefix stacklens_api_"),
        ({"apiKey": APP_KEY}, "apiKey holds an application key"),
        ({"appKey": API_KEY}, "appKey holds an API key"),
        ({"appKey": "Z9y8X7w6V5u4T3s2R1q0P9o8"}, "appKey must start with the prefix stacklens_app_"),
        ({"apiKey": API_KEY + " "}, "apiKey has leading or trailing whitespace"),
        ({"baseUrl": "http://sl.example.com"}, "baseUrl must use https://"),
        ({"logLevel": "loud"}, "logLevel 'loud' is not one of"),
        ({"compress": "yes please"}, "compress: 'yes please' is not true or false"),
    ],
)
def test_each_problem_in_plain_words(tmp_path: Path, fields: dict, needle: str) -> None:
    found = problems(write(tmp_path, good(tmp_path, **fields)))
    assert any(needle in p for p in found), found


def test_per_service_app_key_and_insecure_loopback(tmp_path: Path) -> None:
    fields = good(tmp_path, appKey="stacklens_app_worker-1_" + "Z9y8X7w6V5u4T3s2R1q0P9o8")
    fields.update(baseUrl="http://127.0.0.1:9", allowInsecureHttp=True)
    assert load_config(write(tmp_path, fields)).app_key.startswith("stacklens_app_worker-1_")


def test_file_permissions_git_tree_and_missing_storage(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    fields = good(tmp_path, storagePath=str(tmp_path / "nowhere"))
    found = problems(write(tmp_path / "repo", fields, mode=0o644))
    assert any("readable by group or others" in p and "chmod 600" in p for p in found)
    assert any("inside a git work tree" in p for p in found)
    assert any(p.startswith("Storage path not found") and "create it" in p for p in found)
    # The delivery loop waits for a missing directory instead of refusing to start.
    load_config(write(tmp_path, fields), require_storage=False)


def test_not_yaml_and_no_mapping(tmp_path: Path) -> None:
    bad = tmp_path / "a.yaml"
    bad.write_text("stacklens: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("other: {}\n")
    with pytest.raises(ConfigError, match="top-level mapping 'stacklens:'"):
        load_config(bad)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(SHIPPER), *args], capture_output=True, text=True, timeout=30)


def test_cli_version_and_validate(tmp_path: Path) -> None:
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.startswith("stacklens-shipper ")
    ok = write(tmp_path, good(tmp_path))
    assert run_cli("--config", str(ok), "--validate").returncode == 0
    bad = write(tmp_path, good(tmp_path, batchSize=-1, apiKey=APP_KEY), mode=0o640, name="bad.yaml")
    result = run_cli("--config", str(bad), "--validate")
    assert result.returncode == 1
    assert "batchSize -1 is out of range" in result.stderr and "holds an application key" in result.stderr
    assert "Traceback" not in result.stderr
    missing = run_cli("--config", str(tmp_path / "none.yaml"), "--validate")
    assert missing.returncode == 1 and "not found" in missing.stderr and "Traceback" not in missing.stderr
    assert run_cli("--validate").returncode == 2


def test_a_git_ignored_config_inside_a_work_tree_is_accepted(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / ".gitignore").write_text("data/\n")
    (repo / "data").mkdir()
    fields = good(tmp_path)
    load_config(write(repo / "data", fields))  # raises on any problem
    tracked = write(repo, fields)
    assert any("inside a git work tree" in p and ".gitignore" in p for p in problems(tracked))
