"""`stacklens.yaml`: load, apply defaults and validate (spec "Shipper configuration", docs/shipper.md).

Every problem is reported in plain words; :func:`load_config` collects all of them before failing so
`--validate` can list them in one run.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from stacklens_contract.keys import (
    API_KEY_PREFIX,
    API_KEY_RANDOM_LENGTH,
    APP_KEY_PREFIX,
    APP_KEY_RANDOM_LENGTH,
    is_api_key,
    is_app_key,
)

_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)\s*$")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
MIB = 1024 * 1024
# The dead letters are the lines the service or the shipper refused: a handful a day when all is well. 64 MiB
# holds ~50,000 typical 1.3 KiB lines (a day of a misconfigured service refusing an event every two seconds,
# time to notice and fix it) or 64 at the 1 MiB line limit, and stays small beside the application's own
# logs on a disk the shipper shares with it. A resend streams the file, so its size never raises the
# shipper's memory.
DEAD_LETTER_BYTES = 64 * MIB

# field name -> (kind, default). Kinds: str, key_api, key_app, duration, int, bool, level, size.
FIELDS: dict[str, tuple[str, Any]] = {
    "apiKey": ("key_api", None),
    "appKey": ("key_app", None),
    "baseUrl": ("url", None),
    "storagePath": ("path", None),
    "timeout": ("duration", "1m"),
    "batchSize": ("int", 100),
    "flushInterval": ("duration", "10s"),
    "compress": ("bool", True),
    "compression": ("choice", "gzip"),
    "logLevel": ("level", "info"),
    "verbose": ("bool", False),
    "allowInsecureHttp": ("bool", False),
    "maxLineBytes": ("int", MIB),
    "maxInflightBytes": ("int", 4 * MIB),
    "pollInterval": ("duration", "250ms"),
    "retryBackoff": ("duration", "1s"),
    "retryBackoffMax": ("duration", "30s"),
    "parkDelay": ("duration", "1m"),
    "shutdownGrace": ("duration", "10s"),
    "commitInterval": ("duration", "1s"),
    "maxDeadLetterBytes": ("int", DEAD_LETTER_BYTES),
}
BATCH_SIZE_RANGE = (1, 10_000)
LEVELS = ("debug", "info", "warn", "error")


class ConfigError(Exception):
    """The configuration cannot be used; ``problems`` lists every reason in plain words."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Config:
    """A validated configuration. Durations are seconds, sizes are bytes."""

    path: Path
    api_key: str
    app_key: str
    base_url: str
    storage_path: Path
    timeout: float = 60.0
    batch_size: int = 100
    flush_interval: float = 10.0
    compress: bool = True
    compression: str = "gzip"
    log_level: str = "info"
    verbose: bool = False
    allow_insecure_http: bool = False
    max_line_bytes: int = MIB
    max_inflight_bytes: int = 4 * MIB
    poll_interval: float = 0.25
    retry_backoff: float = 1.0
    retry_backoff_max: float = 30.0
    park_delay: float = 60.0
    shutdown_grace: float = 10.0
    commit_interval: float = 1.0
    max_dead_letter_bytes: int = DEAD_LETTER_BYTES
    warnings: tuple[str, ...] = field(default=())

    @property
    def tracker_path(self) -> Path:
        return self.storage_path / "tracker.json"


def parse_duration(text: object) -> float:
    """`500ms`, `5s`, `2m`, `1h` -> seconds; a bare number is seconds."""
    if isinstance(text, bool):
        raise ValueError("not a duration")
    if isinstance(text, int | float):
        if text < 0:
            raise ValueError("negative")
        return float(text)
    match = _DURATION_RE.match(str(text))
    if not match:
        raise ValueError("not a duration")
    return float(match.group(1)) * _UNITS[match.group(2)]


def _check_key(name: str, kind: str, value: object, problems: list[str]) -> str:
    if not isinstance(value, str) or not value:
        problems.append(f"{name} is missing")
        return ""
    if value != value.strip():
        problems.append(f"{name} has leading or trailing whitespace; remove it")
        value = value.strip()
    if kind == "key_api":
        if value.startswith(APP_KEY_PREFIX):
            problems.append(f"{name} holds an application key ({APP_KEY_PREFIX}...); put the API key here")
        elif not value.startswith(API_KEY_PREFIX):
            problems.append(f"{name} must start with the prefix {API_KEY_PREFIX}")
        elif not is_api_key(value):
            problems.append(
                f"{name} must be {API_KEY_PREFIX} followed by {API_KEY_RANDOM_LENGTH} letters or digits"
            )
    else:
        if value.startswith(API_KEY_PREFIX):
            problems.append(f"{name} holds an API key ({API_KEY_PREFIX}...); put the application key here")
        elif not value.startswith(APP_KEY_PREFIX):
            problems.append(f"{name} must start with the prefix {APP_KEY_PREFIX}")
        elif not is_app_key(value):
            problems.append(
                f"{name} must be {APP_KEY_PREFIX} (optionally a service name and _) followed by "
                f"{APP_KEY_RANDOM_LENGTH} letters or digits"
            )
    return value


def _convert(name: str, kind: str, value: object, problems: list[str]) -> Any:
    if kind in ("key_api", "key_app"):
        return _check_key(name, kind, value, problems)
    if kind == "duration":
        try:
            seconds = parse_duration(value)
        except ValueError:
            problems.append(f"{name}: {value!r} is not a duration (use forms like 500ms, 5s, 2m)")
            return None
        if seconds <= 0:
            problems.append(f"{name} must be longer than zero")
        return seconds
    if kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(f"{name}: {value!r} is not a whole number")
            return None
        if name == "batchSize" and not BATCH_SIZE_RANGE[0] <= value <= BATCH_SIZE_RANGE[1]:
            problems.append(
                f"batchSize {value} is out of range ({BATCH_SIZE_RANGE[0]} to {BATCH_SIZE_RANGE[1]})"
            )
        elif value < 1024 and name != "batchSize":
            problems.append(f"{name} {value} is too small (at least 1024 bytes)")
        return value
    if kind == "bool":
        if not isinstance(value, bool):
            problems.append(f"{name}: {value!r} is not true or false")
            return None
        return value
    if kind == "level":
        if value == "warning":
            value = "warn"
        if value not in LEVELS:
            problems.append(f"logLevel {value!r} is not one of {', '.join(LEVELS)}")
        return value
    if kind == "choice":
        if value not in ("gzip", "zstd"):
            problems.append(f"compression {value!r} is not gzip or zstd")
        return value
    if kind == "url":
        return _check_url(value, problems)
    if kind == "path":
        if not isinstance(value, str) or not value.strip():
            problems.append("storagePath is missing (the SDK's storage_path)")
            return None
        return Path(value).expanduser()
    raise AssertionError(kind)


def _check_url(value: object, problems: list[str]) -> str:
    if not isinstance(value, str) or not value.strip():
        problems.append("baseUrl is missing (the service address, for example https://stacklens.example.com)")
        return ""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        problems.append(f"baseUrl {value!r} is not an http(s) address")
    return value.strip().rstrip("/")


def file_problems(path: Path) -> list[str]:
    """Permission and version-control problems of the config file itself (spec: keep it private)."""
    problems: list[str] = []
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        problems.append(
            f"{path} is readable by group or others (mode {stat.S_IMODE(mode):o}); run: chmod 600 {path}"
        )
    for parent in [path.resolve().parent, *path.resolve().parents]:
        if (parent / ".git").exists():
            if not _git_ignored(parent, path.resolve()):
                problems.append(
                    f"{path} is inside a git work tree ({parent}) and not ignored by it; keys must never be "
                    "committed: move the file out, or add it to the repository's .gitignore"
                )
            break
    return problems


def _git_ignored(work_tree: Path, path: Path) -> bool:
    """Whether git ignores ``path`` in ``work_tree``; without a usable git, assume it does not (refuse)."""
    try:
        result = subprocess.run(
            ["git", "-C", str(work_tree), "check-ignore", "-q", "--", str(path)],
            capture_output=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return result.returncode == 0


def storage_problems(storage: Path) -> list[str]:
    """What keeps the shipper from reading the logs in ``storage`` or writing its tracker there.

    Tried for real (list, create and remove a probe file, open each log file) rather than with ``os.access``,
    which answers for the real user id and so says yes to root even where capabilities were dropped.
    """
    remedy = "grant the shipper user read access to the logs and write access to the log directory"
    try:
        names = sorted(os.listdir(storage))
    except FileNotFoundError:
        return [f"Storage path not found: {storage} does not exist; create it (mkdir -p {storage})"]
    except OSError as exc:
        return [f"Storage path not accessible: cannot list {storage} ({exc.strerror}); {remedy}"]
    problems: list[str] = []
    probe = storage / f".stacklens-shipper-probe-{os.getpid()}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        problems.append(
            f"Storage path not accessible: cannot write tracker.json in {storage} ({exc.strerror}); {remedy}"
        )
    for name in names:
        if not (name.startswith("stacklens-") and name.endswith(".log")):
            continue
        try:
            with open(storage / name, "rb"):
                pass
        except OSError as exc:
            problems.append(
                f"Storage path not accessible: cannot read {storage / name} ({exc.strerror}); {remedy}"
            )
    return problems


def load_config(
    path: str | os.PathLike[str], *, check_file: bool = True, require_storage: bool = True
) -> Config:
    """Read and validate ``path``; raise :class:`ConfigError` with every problem found.

    ``require_storage=False`` is for the delivery loop, which waits for a missing log directory.
    """
    cfg_path = Path(path)
    try:
        text = cfg_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError([f"configuration file {cfg_path} not found"]) from None
    except (PermissionError, IsADirectoryError, UnicodeDecodeError) as exc:
        raise ConfigError(
            [f"configuration file {cfg_path} cannot be read: {exc.__class__.__name__}"]
        ) from None
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise ConfigError([f"{cfg_path} is not valid YAML{where}"]) from None
    if not isinstance(document, dict) or not isinstance(document.get("stacklens"), dict):
        raise ConfigError([f"{cfg_path} must hold a top-level mapping 'stacklens:'"])
    problems: list[str] = []
    for key in document:
        if key != "stacklens":
            problems.append(f"unknown top-level field {key!r} (only 'stacklens' is allowed)")
    raw = document["stacklens"]
    for key in raw:
        if key not in FIELDS:
            problems.append(f"unknown field {key!r} under stacklens")
    values: dict[str, Any] = {}
    for name, (kind, default) in FIELDS.items():
        value = raw.get(name, default)
        values[name] = _convert(name, kind, value, problems)
    if check_file:
        problems.extend(file_problems(cfg_path))
    base = values["baseUrl"] or ""
    if base.startswith("http://") and not values["allowInsecureHttp"]:
        problems.append(
            "baseUrl must use https:// (set allowInsecureHttp: true only for a loopback test server)"
        )
    storage = values["storagePath"]
    if require_storage and storage is not None and not storage.is_dir():
        problems.append(f"Storage path not found: {storage} does not exist; create it (mkdir -p {storage})")
    inflight = values["maxInflightBytes"]
    line = values["maxLineBytes"]
    if isinstance(inflight, int) and isinstance(line, int) and inflight < line:
        problems.append(f"maxInflightBytes ({inflight}) must be at least maxLineBytes ({line})")
    if problems:
        raise ConfigError(problems)
    return Config(
        path=cfg_path,
        api_key=values["apiKey"],
        app_key=values["appKey"],
        base_url=base,
        storage_path=storage,
        timeout=values["timeout"],
        batch_size=values["batchSize"],
        flush_interval=values["flushInterval"],
        compress=values["compress"],
        compression=values["compression"],
        log_level=values["logLevel"],
        verbose=values["verbose"],
        allow_insecure_http=values["allowInsecureHttp"],
        max_line_bytes=line,
        max_inflight_bytes=inflight,
        poll_interval=values["pollInterval"],
        retry_backoff=values["retryBackoff"],
        retry_backoff_max=values["retryBackoffMax"],
        park_delay=values["parkDelay"],
        shutdown_grace=values["shutdownGrace"],
        commit_interval=values["commitInterval"],
        max_dead_letter_bytes=values["maxDeadLetterBytes"],
    )
