"""E-mail over SMTP (``STACKLENS_SMTP_URL``: ``smtp://user:pass@host:port``, ``smtps://…``,
``?starttls=true``), a plain-text and an HTML part. SMTP 4xx answers and connection trouble are retried;
5xx are permanent."""

from __future__ import annotations

import contextlib
import re
import smtplib
import socket
import ssl
import threading
import time
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formatdate
from urllib.parse import parse_qs, unquote, urlsplit

from stacklens.alerts.channels.base import Message, SendResult

EMAIL_RE = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+\.[^@\s<>,;]+$|^[^@\s<>,;]+@localhost$")
SMTP_TIMEOUT_S = 15.0  # each connect or read
# The whole conversation: a server answering one byte every few seconds never trips the per-read timeout, and
# held the schedule's sender (and every tenant behind it) for minutes. At the deadline the socket is shut.
SMTP_DEADLINE_S = 30.0


class _Cutoff:
    """Shuts the socket of an SMTP conversation once its deadline passes (a read blocked on it then fails)."""

    def __init__(self, seconds: float) -> None:
        self.passed = False
        self._sockets: list[socket.socket] = []
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> socket.socket:
        self._sockets.append(sock)
        if self.passed:
            self._cut()
        return sock

    def _cut(self) -> None:
        self.passed = True
        for sock in self._sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def cancel(self) -> None:
        self._timer.cancel()


class _SMTP(smtplib.SMTP):
    def __init__(self, cutoff: _Cutoff, host: str, port: int) -> None:
        self._cutoff = cutoff
        super().__init__(host, port, timeout=SMTP_TIMEOUT_S)

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return self._cutoff.watch(super()._get_socket(host, port, timeout))  # type: ignore[misc]  # smtplib hook, not in typeshed


class _SMTP_SSL(smtplib.SMTP_SSL):  # noqa: N801 - smtplib's own name, with the cutoff
    def __init__(self, cutoff: _Cutoff, host: str, port: int) -> None:
        self._cutoff = cutoff
        super().__init__(host, port, timeout=SMTP_TIMEOUT_S, context=ssl.create_default_context())

    def _get_socket(self, host: str, port: int, timeout: float) -> socket.socket:
        return self._cutoff.watch(super()._get_socket(host, port, timeout))  # type: ignore[misc]  # smtplib hook, not in typeshed


class SmtpConfigError(ValueError):
    """``STACKLENS_SMTP_URL`` is missing or malformed; the message says what to set."""


@dataclass(frozen=True)
class SmtpTarget:
    host: str
    port: int
    username: str | None
    password: str | None
    ssl: bool
    starttls: bool

    @classmethod
    def parse(cls, url: str | None) -> SmtpTarget:
        if not url:
            raise SmtpConfigError(
                "e-mail needs STACKLENS_SMTP_URL (smtp://user:pass@host:port) on the server"
            )
        parts = urlsplit(url)
        if parts.scheme not in ("smtp", "smtps") or not parts.hostname:
            raise SmtpConfigError("STACKLENS_SMTP_URL must look like smtp://user:pass@host:port or smtps://…")
        query = parse_qs(parts.query)
        return cls(
            host=parts.hostname,
            port=parts.port or (465 if parts.scheme == "smtps" else 25),
            username=unquote(parts.username) if parts.username else None,
            password=unquote(parts.password) if parts.password else None,
            ssl=parts.scheme == "smtps",
            starttls=query.get("starttls", ["false"])[0].lower() in ("1", "true", "yes"),
        )


def validate_recipients(to: object) -> list[str]:
    """The cleaned list of addresses, or ``ValueError`` naming the field and the bad address."""
    if isinstance(to, str):
        to = [p for p in re.split(r"[,\s;]+", to) if p]
    if not isinstance(to, list) or not to:
        raise ValueError("to: give at least one e-mail address")
    cleaned = []
    for address in to:
        if not isinstance(address, str) or not EMAIL_RE.match(address.strip()):
            raise ValueError(f"to: {address!r} is not an e-mail address")
        cleaned.append(address.strip())
    if len(cleaned) > 50:
        raise ValueError("to: at most 50 addresses")
    return cleaned


class EmailChannel:
    def __init__(self, to: list[str], smtp_url: str | None, mail_from: str) -> None:
        self.to = to
        self.smtp_url = smtp_url
        self.mail_from = mail_from

    def build(self, message: Message) -> EmailMessage:
        mail = EmailMessage()
        # A header may not hold a line break (the email package raises); an issue title can carry one.
        mail["Subject"] = " ".join(message.subject.split())
        mail["From"] = self.mail_from
        mail["To"] = ", ".join(self.to)
        mail["Date"] = formatdate(usegmt=True)
        # The outbox id as Message-ID: a resend after a crash carries the same one, so mail clients and
        # filters can recognise the duplicate.
        domain = self.mail_from.rsplit("@", 1)[-1] or "stacklens"
        mail["Message-ID"] = f"<{message.id}@{domain}>"
        mail["X-StackLens-Notification"] = message.id
        mail.set_content(message.text)
        mail.add_alternative(message.html, subtype="html")
        for filename, content_type, data in message.attachments:
            maintype, _, subtype = content_type.partition("/")
            mail.add_attachment(data, maintype=maintype, subtype=subtype, filename=filename)
        return mail

    def send(self, message: Message) -> SendResult:
        started = time.perf_counter()
        try:
            target = SmtpTarget.parse(self.smtp_url)
        except SmtpConfigError as exc:
            return SendResult(ok=False, retryable=False, error=str(exc))
        mail = self.build(message)
        cutoff = _Cutoff(SMTP_DEADLINE_S)
        try:
            smtp: smtplib.SMTP
            if target.ssl:
                smtp = _SMTP_SSL(cutoff, target.host, target.port)
            else:
                smtp = _SMTP(cutoff, target.host, target.port)
            with smtp:
                if target.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if target.username:
                    smtp.login(target.username, target.password or "")
                refused = smtp.send_message(mail)
        except smtplib.SMTPRecipientsRefused as exc:
            first = next(iter(exc.recipients.values()))
            return self._failure(
                started, first[0], f"the SMTP server refused every recipient: {_text(first[1])}"
            )
        except smtplib.SMTPResponseException as exc:
            return self._failure(
                started, exc.smtp_code, f"the SMTP server answered {exc.smtp_code}: {_text(exc.smtp_error)}"
            )
        except (TimeoutError, smtplib.SMTPException, OSError) as exc:
            where = f"{target.host}:{target.port}"
            why = (
                f"the conversation did not finish within {SMTP_DEADLINE_S:g} s"
                if cutoff.passed
                else exc or type(exc).__name__
            )
            return SendResult(
                ok=False,
                retryable=True,
                latency_ms=_ms(started),
                error=f"cannot reach the SMTP server {where}: {why}",
            )
        finally:
            cutoff.cancel()
        excerpt = f"250 accepted for {len(self.to) - len(refused)} of {len(self.to)} recipients"
        return SendResult(ok=True, status_code=250, latency_ms=_ms(started), excerpt=excerpt)

    @staticmethod
    def _failure(started: float, code: int, error: str) -> SendResult:
        return SendResult(
            ok=False,
            retryable=400 <= code < 500,
            status_code=code,
            latency_ms=_ms(started),
            excerpt=error[:300],
            error=error[:500],
        )


def _text(value: bytes | str) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 1)
