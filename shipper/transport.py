"""HTTP to the service: the batch request (docs/architecture.md §11.2), the verify call, and what each answer
means."""

from __future__ import annotations

import email.utils
import enum
import gzip
import ssl
import time
from dataclasses import dataclass
from typing import Any

import httpx
import zstandard

from shipper import __version__, faults
from shipper.config import Config
from stacklens_contract.words import APPLICATION_NOT_FOUND, AUTHENTICATION_FAILED, INVALID_API_KEY

USER_AGENT = f"stacklens-shipper/{__version__}"
RETRY_AFTER_CAP = 600.0  # a broken Retry-After must not park a host for days


class Outcome(enum.Enum):
    OK = "ok"
    RETRY = "retry"  # network error, timeout, 429, 5xx: try again with the same Idempotency-Key
    AUTH = "auth"  # 401: wait for a config fix
    APP = "app"  # 404 Application Not Found: wait for a config fix
    TOO_LARGE = "too_large"  # 413: split the batch
    BAD_REQUEST = "bad_request"  # 400/409/422, any 4xx but 401/404/408/413/415/429: split down to the line
    ENCODING = "encoding"  # 415: the service does not take this Content-Encoding


@dataclass
class Answer:
    outcome: Outcome
    message: str
    retry_after: float | None = None
    body: dict[str, Any] | None = None


def retry_reason(answer: Answer) -> str:
    """The reason shown in ``Retry attempt k/3 (…)``, with the service's Retry-After when it gave one."""
    if answer.retry_after is None:
        return answer.message
    return f"{answer.message}, Retry-After {answer.retry_after:g}s"


def network_error_name(exc: BaseException) -> str:
    """The spec's names for network failures: Connection refused / Connection timeout / SSL certificate
    error."""
    if isinstance(exc, httpx.TimeoutException):
        return "Connection timeout"
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLCertVerificationError):
            return "SSL certificate error"
        if isinstance(cause, ConnectionRefusedError):
            return "Connection refused"
        cause = cause.__cause__ or cause.__context__
    text = str(exc)
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return "SSL certificate error"
    if "Connection refused" in text or "[Errno 111]" in text:
        return "Connection refused"
    return f"Network error ({exc.__class__.__name__}: {text or 'no detail'})"


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Retry-After as seconds or an HTTP date (RFC 9110 §10.2.3); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return min(float(value), RETRY_AFTER_CAP)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    delay = when.timestamp() - (time.time() if now is None else now)
    return min(max(delay, 0.0), RETRY_AFTER_CAP)


def compress(body: bytes, method: str) -> bytes:
    if method == "zstd":
        return zstandard.ZstdCompressor(level=3).compress(body)
    # Level 1: on log JSON it is ~4x faster than the default 9 for ~15% larger output.
    return gzip.compress(body, compresslevel=1, mtime=0)


class Transport:
    """One HTTP client for the service; rebuilt when the configuration is reloaded."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.encoding = config.compression if config.compress else "identity"
        self.client = httpx.Client(
            base_url=config.base_url,
            timeout=httpx.Timeout(config.timeout),
            headers={"User-Agent": USER_AGENT, "Authorization": f"Bearer {config.api_key}"},
            follow_redirects=False,
        )

    def close(self) -> None:
        self.client.close()

    def verify(self) -> tuple[bool, str]:
        """GET /api/auth/verify -> (ok, organization or the failure in words). Network errors raise.

        The failure is exactly ``Authentication failed`` only when a StackLens server refused the key; any
        other answer (a web server, a proxy's login page, another product) names what answered instead,
        because sending the user to fix a key that is fine would send them the wrong way."""
        response = self.client.get("/api/auth/verify")
        if response.status_code == 401 and _is_stacklens_error(response):
            return False, AUTHENTICATION_FAILED
        data = _json_object(response) if response.status_code == 200 else None
        if data is None or not isinstance(data.get("valid"), bool):
            kind = response.headers.get("content-type", "no content type").split(";")[0].strip()
            return False, (
                f"{self.config.base_url} is not a StackLens server: GET /api/auth/verify answered "
                f"{response.status_code} ({kind}); check baseUrl in {self.config.path}"
            )
        if not data["valid"]:
            return False, AUTHENTICATION_FAILED
        return True, str(data.get("organization", ""))

    def send(self, body: bytes, batch_id: str) -> Answer:
        """POST one batch; never raises for network trouble (that is an Answer to retry)."""
        headers = {
            "Content-Type": "application/x-ndjson",
            "Idempotency-Key": batch_id,
            "X-Stacklens-App-Key": self.config.app_key,
        }
        content = body
        if self.encoding != "identity":
            content = compress(body, self.encoding)
            headers["Content-Encoding"] = self.encoding
        try:
            response = self.client.post("/api/ingest", content=content, headers=headers)
        except httpx.HTTPError as exc:
            return Answer(Outcome.RETRY, network_error_name(exc))
        faults.hit("after_send")
        return classify(response)


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200] or response.reason_phrase
    if isinstance(data, dict):
        parts = [str(data.get("error", "")), str(data.get("detail", ""))]
        return ": ".join(p for p in parts if p) or response.reason_phrase
    return response.reason_phrase


def classify(response: httpx.Response) -> Answer:
    status = response.status_code
    if 200 <= status < 300:
        try:
            data = response.json()
        except ValueError:
            data = {}
        return Answer(Outcome.OK, "ok", body=data if isinstance(data, dict) else {})
    text = _error_text(response)
    retry_after = parse_retry_after(response.headers.get("Retry-After"))
    if status == 401:
        return Answer(Outcome.AUTH, text or INVALID_API_KEY)
    if status == 404:
        return Answer(Outcome.APP, text or APPLICATION_NOT_FOUND)
    if status == 413:
        return Answer(Outcome.TOO_LARGE, text)
    if status in (400, 409, 422):
        # The body as sent is refused (409: its Idempotency-Key was used for other bytes): halves carry
        # their own keys, and a single line refused alone goes to the dead letters.
        return Answer(Outcome.BAD_REQUEST, text)
    if status == 415:
        return Answer(Outcome.ENCODING, text)
    if 400 <= status < 500 and status not in (408, 429):
        # Any other refusal (403, 410, …) is final for these bytes: retrying would stall the file for ever.
        # Split down to the line like a 400; a line refused alone goes to the dead letters with the answer.
        return Answer(Outcome.BAD_REQUEST, f"{status} {text}")
    # 408, 429, 5xx and anything unexpected: the data is fine, the moment is not.
    return Answer(Outcome.RETRY, f"{status} {text}", retry_after=retry_after)


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _is_stacklens_error(response: httpx.Response) -> bool:
    """StackLens refuses a key with the spec's ``{"error": "Invalid API Key", …}``."""
    data = _json_object(response)
    return data is not None and data.get("error") == INVALID_API_KEY
