"""SDK side of secret filtering: the process's own key on the command line (sentry-sdk's ``sys.argv``
extra) and other secret shapes never reach the log file; the SDK's walk and the service's redact the same
strings (both apply ``stacklens_contract.secret_shapes``)."""

from __future__ import annotations

import json
import secrets
import string
import sys
from pathlib import Path

import pytest

import stacklens_sdk
from stacklens.ingest.secret_redaction import redact_everywhere as service_redact
from stacklens_contract.words import FILTERED
from stacklens_sdk.scrubbing import redact_everywhere

CASES = {
    "--app-key stacklens_app_" + "Ab3dEfGhIjKlMnOpQrStUvWx": "--app-key " + FILTERED,
    "stacklens_api_" + "0123456789abcdefghijABCDEFGHIJkl": FILTERED,
    "mcp refused stacklens_pat_" + "Qm9vT2tlbl9mb3JfYV90ZXN0X29ubHlfMTIzNDU2Nzg": "mcp refused " + FILTERED,
    "Bearer stacklens_oat_" + "x-9_Zm9yX2FuX2FnZW50X3Rlc3Rfb25seV8xMjM0NTY": "Bearer " + FILTERED,
    "refresh_with=stacklens_ort_" + "cmVmcmVzaF9mb3JfYV90ZXN0X29ubHlfMTIzNDU2Nzg": "refresh_with=" + FILTERED,
    "key=AKIA" + "IOSFODNN7EXAMPLE;": "key=" + FILTERED + ";",
    "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8": FILTERED,
    "Bearer eyJhbGciOiJIUzI1NiJ9."
    + "eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THs": "Bearer " + FILTERED,
    "redis://:s3cret-pass@cache:6379/0": "redis://:s3cret-pass@cache:6379/0",  # no user: not the shape
    "postgres://app:hunter2@db/x": "postgres://app:" + FILTERED + "@db/x",
    "plain words, https://example.com/a": "plain words, https://example.com/a",
}


@pytest.mark.parametrize(("text", "expected"), CASES.items())
def test_sdk_and_service_filter_the_same_shapes(text: str, expected: str) -> None:
    # The service copies on write, the SDK changes the event in place: build one event per side.
    assert service_redact({"extra": {"argv": [text]}}) == {"extra": {"argv": [expected]}}
    assert redact_everywhere({"extra": {"argv": [text]}}) == {"extra": {"argv": [expected]}}


def test_sys_argv_key_never_reaches_the_log_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "stacklens_app_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(24))
    monkeypatch.setattr(sys, "argv", ["worker.py", "--app-key", key, "--verbose"])
    stacklens_sdk.init(app_key=key, storage_path=tmp_path)
    try:
        raise RuntimeError("cannot reach postgres://app:hunter2@db/x")
    except RuntimeError as exc:
        stacklens_sdk.capture_exception(exc)
    stacklens_sdk.flush()
    lines = [
        json.loads(line)
        for path in tmp_path.glob("stacklens-*.log")
        for line in path.read_text().splitlines()
    ]
    event = next(line for line in lines if line["type"] == "event")
    assert event["app_key"] == key  # the envelope keeps it: the shipper needs it
    payload = json.dumps(event["payload"])
    assert key not in payload and "hunter2" not in payload
    assert event["payload"]["extra"]["sys.argv"] == ["worker.py", "--app-key", FILTERED, "--verbose"]


def test_an_agent_token_never_reaches_the_log_file_from_an_error_a_breadcrumb_or_a_log_record(
    tmp_path: Path,
) -> None:
    """A personal token (stacklens/agents/tokens.py) pasted into an exception's message, a breadcrumb and a
    log record sent by sentry-sdk's logs API is filtered before the line is written."""
    from sentry_sdk import logger as sentry_logger

    from stacklens.agents.tokens import PERSONAL_PREFIX, new_secret

    token = new_secret(PERSONAL_PREFIX)
    key = "stacklens_app_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(24))
    stacklens_sdk.init(app_key=key, storage_path=tmp_path, enable_logs=True)
    stacklens_sdk.add_breadcrumb(category="agent", message=f"agent connected with {token}")
    try:
        raise PermissionError(f"agent token refused: {token}")
    except PermissionError as exc:
        stacklens_sdk.capture_exception(exc)
    sentry_logger.warning("nightly export called the agent API with " + token, job=f"token={token}")
    stacklens_sdk.flush()
    lines = [
        json.loads(line)
        for path in tmp_path.glob("stacklens-*.log")
        for line in path.read_text().splitlines()
    ]
    event = next(line for line in lines if line["type"] == "event")
    record = next(line for line in lines if line["type"] == "log")
    assert event["payload"]["exception"]["values"][0]["value"] == f"agent token refused: {FILTERED}"
    assert record["payload"]["body"] == f"nightly export called the agent API with {FILTERED}"
    assert token not in json.dumps(lines) and f"agent connected with {FILTERED}" in json.dumps(event)
