"""The one settings class of the service (environment prefix ``STACKLENS_``).

Settings are built on first use through :func:`get_settings`, never at import, so tests and the CLI can
point a process at another data directory before anything reads it. :func:`override_settings` swaps them
for tests.
"""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from stacklens.disk_floor_setting import parse_floor
from stacklens.netaddr import parse_networks

# Values people paste from examples; a server running with one of them has no secret at all.
PLACEHOLDER_SECRETS = frozenset(
    {"", "changeme", "change-me", "change_me", "secret", "your-secret-key", "placeholder", "xxx", "todo"}
)
SECRET_FILE_NAME = "secret_key"


class SettingsError(ValueError):
    """A setting is unusable; the message names the variable and why."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="STACKLENS_", extra="ignore")

    data_dir: Path = Field(default=Path("./data"), description="Where embedded state lives.")
    warehouse_url: str | None = Field(
        default=None, description="chdb://<path> (embedded) or http(s)://host:8123 (ClickHouse server)."
    )
    warehouse_database: str = Field(default="stacklens", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    warehouse_cluster: str | None = Field(
        default=None,
        description="ClickHouse cluster (remote_servers) name: migrations create Replicated tables behind "
        "Distributed ones, ON CLUSTER (docs/deploy.md).",
    )
    database_url: str | None = Field(default=None, description="SQLAlchemy URL of the control store.")
    secret_key: SecretStr | None = Field(default=None, description="Server secret; generated when unset.")
    redis_url: str | None = Field(default=None, description="Redis for shared rate limits (scaled mode).")
    spike_multiple: float = Field(
        default=10.0,
        ge=1.0,
        le=1000.0,
        description="Spike protection: a project is held to this multiple of its trailing hour's events per "
        "minute (docs/decisions.md).",
    )
    spike_floor_per_minute: int = Field(
        default=10_000,
        ge=1,
        le=100_000_000,
        description="Spike protection never holds a project below this many events per minute (a quiet "
        "project can still send a burst).",
    )
    dagster_database_url: str | None = Field(
        default=None,
        description="postgresql+psycopg2://user:pass@host:5432/db of the Dagster instance (runs, event logs, "
        "schedules) in scaled mode, a database of its own; unset: SQLite under <data_dir>/dagster.",
    )
    retention_days: int = Field(default=90, ge=1, le=3650, description="TTL of raw events.")
    log_retention_days: int = Field(
        default=30,
        ge=1,
        le=3650,
        description="TTL of raw log records (the `logs` table), apart from events'.",
    )
    attachment_max_bytes: int = Field(
        default=20 * 1024 * 1024,
        ge=1024,
        le=64 * 1024 * 1024,
        description="The largest attachment kept (bytes); an envelope with a larger one is refused (413).",
    )
    attachment_quota_bytes: int = Field(
        default=1024 * 1024 * 1024,
        ge=0,
        description="Bytes of attachments each project keeps at most; more are refused and counted.",
    )
    retention_run_at: str = Field(
        default="03:30",
        pattern=r"^(off|([01][0-9]|2[0-3]):[0-5][0-9])$",
        description="UTC time of day (HH:MM) of the server's daily retention run (projects' days and event "
        "caps); off: none (run `stacklens retention run` from cron instead).",
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    public_url: str | None = Field(
        default=None,
        description="The address people and SDKs reach the service at (https://lens.example.com): the base of "
        "every absolute link it writes (alerts, e-mails, webhooks, tracker bodies, share links, DSNs); unset: "
        "the address `stacklens serve` listens on (stacklens/public_url.py).",
    )
    run_schedules: bool = Field(default=True, description="`stacklens serve` runs pipeline schedules.")
    ingest_workers: int | None = Field(
        default=None,
        ge=0,
        le=64,
        description="Processes that prepare large ingest batches in parallel; 0 prepares in the request's "
        "thread; unset: 2 on machines with two cores or more, else 0.",
    )

    spool_sync: bool = Field(
        default=True,
        description="Sync the front door's spool journals (the file, then its folder) before an entrance "
        "answers 200, so an answered row survives a power loss; off: faster on slow disks, and a power loss "
        "may lose the rows answered in the last seconds (a killed process still loses nothing). "
        "docs/operations.md.",
    )

    session_idle_minutes: int = Field(
        default=480, ge=1, le=525_600, description="A dashboard session unused this long is signed out."
    )
    session_max_days: int = Field(
        default=14, ge=1, le=365, description="A dashboard session ends this long after sign-in, used or not."
    )
    trusted_proxies: str = Field(
        default="",
        description="Comma-separated IPs or CIDRs of reverse proxies whose X-Forwarded-For and "
        "X-Forwarded-Proto headers are believed; empty: none.",
    )
    login_throttle_after: int = Field(
        default=5,
        ge=1,
        le=1000,
        description="Failed sign-ins for one account before delays start (four times as many per client).",
    )
    login_throttle_base_seconds: float = Field(
        default=1.0, gt=0, le=3600, description="First delay after the free attempts; doubles per failure."
    )
    login_throttle_max_seconds: float = Field(
        default=900.0, gt=0, le=86_400, description="Longest delay between two sign-in attempts."
    )
    invitation_days: int = Field(default=7, ge=1, le=90, description="How long an invitation link works.")
    agent_calls_per_minute: int = Field(
        default=120, ge=1, le=100_000, description="Agents (/mcp): tool calls a token may make per minute."
    )
    agent_concurrency: int = Field(
        default=4,
        ge=1,
        le=1_000,
        description="Agents (/mcp): tool calls of one organization running at once.",
    )
    agent_explore_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="Agents (/mcp): the share of the server's time their Explore questions may hold, all "
        "organizations together (over it, an Explore call is told when to retry).",
    )

    outbound_allow: str = Field(
        default="",
        description="Hosts or CIDRs (comma-separated) that outbound calls may reach although they are loopback, "
        "private or link-local (docs/architecture.md §8); everything else of that kind is refused.",
    )
    smtp_url: str | None = Field(
        default=None,
        description="smtp://user:pass@host:port, smtps://…, ?starttls=true: where alert e-mail goes.",
    )
    mail_from: str = Field(default="stacklens@localhost", description="Sender address of alert e-mail.")
    disk_floor: str | None = Field(
        default=None,
        description="Free space the data directory's volume keeps: bytes (1073741824), a size with a unit "
        "(500MiB, 2GB) or a share of the volume (5%); below it every entrance answers 503 with Retry-After. "
        "Unset: the smaller of 1 GiB and 5 % (stacklens/disk_floor.py).",
    )

    @field_validator("trusted_proxies")
    @classmethod
    def _valid_proxies(cls, value: str) -> str:
        parse_networks(value)  # raises with the offending entry named
        return value

    @field_validator("disk_floor")
    @classmethod
    def _valid_disk_floor(cls, value: str | None) -> str | None:
        try:
            parse_floor(value)
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        return value.strip() if value and value.strip() else None

    @field_validator("public_url")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        # Every link the service writes starts with it: a query or fragment would end up in the middle of
        # each link, and a trailing slash would double the one every path starts with.
        if value is None or not value.strip():
            return None
        value = value.strip()
        parts = urlsplit(value)
        try:
            parts.port  # noqa: B018 - raises on a port that is not a number in 0-65535
        except ValueError as exc:
            raise SettingsError(f"STACKLENS_PUBLIC_URL {value!r} has an invalid port ({exc})") from exc
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise SettingsError(
                f"STACKLENS_PUBLIC_URL {value!r} must be an http(s) URL with a host, like https://lens.example.com"
            )
        if parts.query or parts.fragment or value.endswith(("?", "#")):
            raise SettingsError(
                f"STACKLENS_PUBLIC_URL {value!r} must not carry a query or fragment: links are built by appending "
                "paths to it"
            )
        if parts.username is not None or parts.password is not None:
            raise SettingsError(
                "STACKLENS_PUBLIC_URL must not carry credentials: it is written into every link and DSN"
            )
        return value.rstrip("/")

    @field_validator("dagster_database_url")
    @classmethod
    def _libpq_url(cls, value: str | None) -> str | None:
        # dagster-postgres is written for psycopg2 (its run-event NOTIFY binds a parameter psycopg 3 sends
        # to the server, which refuses it), and SQLAlchemy's default PostgreSQL driver is psycopg 3 now: the
        # driver is named, and dagster.yaml passes the variable on as it is.
        if value and not value.startswith("postgresql+psycopg2://"):
            raise SettingsError(
                "STACKLENS_DAGSTER_DATABASE_URL must be a postgresql+psycopg2://user:pass@host:5432/database URL "
                "(Dagster's PostgreSQL storage runs on psycopg2)"
            )
        return value or None

    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, value: Path) -> Path:
        return value.expanduser().resolve()

    @model_validator(mode="after")
    def _refuse_placeholder_secret(self) -> Settings:
        if self.secret_key is not None:
            raw = self.secret_key.get_secret_value()
            if raw.strip().lower() in PLACEHOLDER_SECRETS or len(raw) < 16:
                raise SettingsError(
                    "STACKLENS_SECRET_KEY is a placeholder or shorter than 16 characters; "
                    "unset it to have one generated, or set a long random value"
                )
        return self

    @property
    def resolved_warehouse_url(self) -> str:
        return self.warehouse_url or _in_data_dir("chdb://", self.data_dir, "warehouse")

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or _in_data_dir("sqlite:///", self.data_dir, "control.db")

    @property
    def dagster_home(self) -> Path:
        return self.data_dir / "dagster"

    @property
    def embedded_warehouse(self) -> bool:
        return self.resolved_warehouse_url.startswith("chdb://")

    def secret(self) -> bytes:
        """The server secret: from the environment, else from ``<data_dir>/secret_key`` (created 0600)."""
        if self.secret_key is not None:
            return self.secret_key.get_secret_value().encode()
        path = self.data_dir / SECRET_FILE_NAME
        if not path.exists():
            self.data_dir.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(secrets.token_urlsafe(48))
        value = path.read_text().strip()
        if value.lower() in PLACEHOLDER_SECRETS or len(value) < 16:
            raise SettingsError(f"{path} holds a placeholder secret; delete it to have a new one generated")
        return value.encode()


_override: Settings | None = None


@lru_cache(maxsize=1)
def _cached_settings() -> Settings:
    return Settings()


def get_settings() -> Settings:
    """The process's settings, built on first call."""
    return _override if _override is not None else _cached_settings()


def override_settings(settings: Settings | None) -> None:
    """Use ``settings`` for this process (tests); ``None`` returns to the environment's."""
    global _override
    _override = settings
    _cached_settings.cache_clear()


@lru_cache(maxsize=256)
def _in_data_dir(scheme: str, data_dir: Path, name: str) -> str:
    # Remembered: every request reads these URLs several times (its limiter, key-use and outcome tallies are
    # keyed by them), and joining paths each time was a few percent of a one-event request's time.
    return f"{scheme}{data_dir / name}"
