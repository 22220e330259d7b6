"""``stacklens_sdk.init``: sentry-sdk with the file transport and the StackLens defaults."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sentry_sdk
from sentry_sdk.integrations.logging import ignore_logger

from stacklens_sdk.host import host_contexts
from stacklens_sdk.keys import ConfigurationError, check_app_key, service_of
from stacklens_sdk.logfile import DEFAULT_MAX_LINE_BYTES, DIRECTORY_MODE, LogWriter, shared_writer
from stacklens_sdk.scrubbing import StacklensScrubber, chain_before_breadcrumb
from stacklens_sdk.transport import FileTransport

# Options that would make sentry-sdk send over the network or replace our transport.
_REFUSED_OPTIONS = {
    "dsn": "the SDK writes log files that the shipper delivers; remove dsn",
    "transport": "the SDK's file transport is the only transport; remove transport",
    "spotlight": "Spotlight sends events over the network; remove spotlight",
}


@dataclass
class SdkState:
    """What ``init`` configured; the browser tunnel reads it."""

    app_key: str
    storage_path: str
    writer: LogWriter
    transport: FileTransport
    browser_app_keys: frozenset[str] = field(default_factory=frozenset)


_state: SdkState | None = None


def current() -> SdkState | None:
    """The configuration of the last ``init`` call, or None before it."""
    return _state


def prepare_storage_path(storage_path: str | os.PathLike[str]) -> str:
    """Create ``storage_path`` (mode 0770) when missing and check that log files can be created in it."""
    if not isinstance(storage_path, str | os.PathLike) or not os.fspath(storage_path):
        raise ConfigurationError(
            "storage_path is required: pass the directory the shipper reads (its storagePath)"
        )
    path = os.path.abspath(os.path.expanduser(os.fspath(storage_path)))
    if not os.path.exists(path):
        try:
            os.makedirs(path, mode=DIRECTORY_MODE)
            os.chmod(path, DIRECTORY_MODE)
        except FileExistsError:
            pass  # created by another worker process at the same moment
        except OSError as exc:
            raise ConfigurationError(
                f"storage_path {path} does not exist and cannot be created ({exc.strerror}): create it and give "
                "the application's user write access, or choose another directory"
            ) from exc
    if not os.path.isdir(path):
        raise ConfigurationError(f"storage_path {path} is not a directory: point it at the log directory")
    # Prove it by creating (and removing) a file: os.access() says yes to root even on read-only mounts.
    probe = os.path.join(path, f".stacklens-write-test-{os.getpid()}")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, stat.S_IRUSR | stat.S_IWUSR)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise ConfigurationError(
            f"storage_path {path} is not writable ({exc.strerror}): give the application's user write access "
            f"(e.g. chown/chmod the directory) or choose another directory"
        ) from exc
    return path


def init(
    app_key: str,
    storage_path: str | os.PathLike[str],
    *,
    environment: str | None = None,
    release: str | None = None,
    in_app_include: Sequence[str] | None = None,
    in_app_exclude: Sequence[str] | None = None,
    send_default_pii: bool = False,
    traces_sample_rate: float | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    denylist: Iterable[str] | None = None,
    pii_denylist: Iterable[str] | None = None,
    browser_app_keys: Iterable[str] = (),
    vendor_frame_vars: bool = False,
    **options: Any,
) -> Any:
    """Start recording errors and performance into ``<storage_path>/stacklens-YYYY-MM-DD.log``.

    ``app_key`` is the project's application key (or a per-service key ``stacklens_app_<service>_…``);
    ``storage_path`` must be the directory the shipper reads (its ``storagePath``). Every other keyword is a
    sentry-sdk option (``integrations``, ``sample_rate``, ``before_send``, …). ``denylist``/``pii_denylist``
    add field names to filter; ``browser_app_keys`` are further keys the browser tunnel accepts;
    ``vendor_frame_vars=True`` keeps local variables of framework (not in-app) frames, dropped by default.

    Raises ``ConfigurationError`` with the fix when a value cannot work. Returns what ``sentry_sdk.init``
    returns (usable as a context manager that flushes and closes on exit).
    """
    global _state
    key = check_app_key(app_key)
    extra_keys = frozenset(check_app_key(k) for k in browser_app_keys)
    for name, fix in _REFUSED_OPTIONS.items():
        if name in options:
            raise ConfigurationError(f"option {name!r} is not supported: {fix}")
    if not isinstance(max_line_bytes, int) or max_line_bytes < 1024:
        raise ConfigurationError("max_line_bytes must be an integer of at least 1024 bytes")
    path = prepare_storage_path(storage_path)

    writer = shared_writer(path, max_line_bytes)
    send_client_reports = bool(options.get("send_client_reports", True))
    transport = FileTransport(key, writer, send_client_reports=send_client_reports)
    options.setdefault(
        "event_scrubber",
        StacklensScrubber(
            denylist,
            send_default_pii=send_default_pii,
            pii_denylist=pii_denylist,
            vendor_frame_vars=vendor_frame_vars,
        ),
    )
    options["before_breadcrumb"] = chain_before_breadcrumb(options.get("before_breadcrumb"))

    if send_default_pii:
        # Only forwarded when on: sentry-sdk 2.75 warns about the option whenever it is given, and off is its
        # default.
        options["send_default_pii"] = True
    # The SDK's own reports (disk full, …) go to the application's log handlers, never back into the SDK.
    ignore_logger("stacklens_sdk")
    guard = sentry_sdk.init(
        transport=transport,
        spotlight=False,
        environment=environment,
        release=release,
        in_app_include=list(in_app_include or []),
        in_app_exclude=list(in_app_exclude or []),
        traces_sample_rate=traces_sample_rate,
        **options,
    )
    for name, context in host_contexts().items():
        # Global scope: an event that brings its own os/device context (a mobile SDK's) keeps it.
        sentry_sdk.get_global_scope().set_context(name, context)
    service = service_of(key)
    if service:
        # The service is also derivable from the key; the tag makes it filterable like any other.
        sentry_sdk.get_global_scope().set_tag("service", service)
    _state = SdkState(key, path, writer, transport, extra_keys | {key})
    return guard
