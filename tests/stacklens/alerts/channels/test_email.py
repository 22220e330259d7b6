from __future__ import annotations

import email
from collections.abc import Iterator

import pytest

from stacklens.alerts.channels.base import Message
from stacklens.alerts.channels.email import EmailChannel, SmtpTarget, validate_recipients
from tests.stacklens.alerts.helpers import MailSink, free_port, start_smtp

MESSAGE = Message(
    id="msg_abc",
    kind="firing",
    subject="[firing] Checkout LCP p75 2,310 ms > 2,000 ms",
    text="LCP p75 is 2,310 ms, above 2,000 ms since 10:02 UTC",
    html="<p>LCP <b>2,310 ms</b></p>",
    link="http://localhost/x",
)


@pytest.fixture
def sink() -> Iterator[MailSink]:
    sink = MailSink()
    controller = start_smtp(sink)
    sink.port = controller.port  # type: ignore[attr-defined]
    yield sink
    controller.stop()


def test_real_smtp_server_receives_plain_and_html_parts(sink: MailSink) -> None:
    channel = EmailChannel(
        ["ops@acme.test", "dev@acme.test"],
        f"smtp://127.0.0.1:{sink.port}",  # type: ignore[attr-defined]
        "alerts@acme.test",
    )
    result = channel.send(MESSAGE)
    assert result.ok and result.status_code == 250
    envelope = sink.messages[0]
    assert (
        envelope.rcpt_tos == ["ops@acme.test", "dev@acme.test"] and envelope.mail_from == "alerts@acme.test"
    )
    mail = email.message_from_bytes(envelope.original_content)
    assert mail["Subject"] == MESSAGE.subject and mail["Message-ID"] == "<msg_abc@acme.test>"
    parts = {
        p.get_content_type(): p.get_payload(decode=True).decode() for p in mail.walk() if not p.is_multipart()
    }
    assert "2,310 ms, above 2,000 ms" in parts["text/plain"] and "<b>2,310 ms</b>" in parts["text/html"]


def test_refused_recipients_are_a_permanent_failure_with_the_servers_words(sink: MailSink) -> None:
    sink.refuse = True
    result = EmailChannel(["ops@acme.test"], f"smtp://127.0.0.1:{sink.port}", "a@acme.test").send(MESSAGE)  # type: ignore[attr-defined]
    assert not result.ok and not result.retryable and result.status_code == 550
    assert "refused every recipient" in result.error and "mailbox unavailable" in result.error


def test_unreachable_server_is_retryable_and_missing_setting_is_explained() -> None:
    result = EmailChannel(["ops@acme.test"], f"smtp://127.0.0.1:{free_port()}", "a@acme.test").send(MESSAGE)
    assert not result.ok and result.retryable and "cannot reach the SMTP server" in result.error
    missing = EmailChannel(["ops@acme.test"], None, "a@acme.test").send(MESSAGE)
    assert not missing.retryable and "STACKLENS_SMTP_URL" in missing.error


def test_smtp_url_forms_and_recipient_validation() -> None:
    target = SmtpTarget.parse("smtps://u%40x:p%3Aw@mail.test?starttls=false")
    assert (target.host, target.port, target.username, target.password, target.ssl) == (
        "mail.test",
        465,
        "u@x",
        "p:w",
        True,
    )
    assert SmtpTarget.parse("smtp://mail.test:2525?starttls=true").starttls
    assert validate_recipients("a@b.test, c@d.test") == ["a@b.test", "c@d.test"]
    with pytest.raises(ValueError, match="to: 'nope' is not an e-mail address"):
        validate_recipients(["nope"])
    with pytest.raises(ValueError, match="at least one"):
        validate_recipients([])


def test_a_server_that_trickles_is_cut_off_at_the_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte every half second never trips the per-read timeout; the conversation's deadline cuts it."""
    import socket
    import threading
    import time

    from stacklens.alerts.channels import email as email_channel

    monkeypatch.setattr(email_channel, "SMTP_DEADLINE_S", 1.5)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = listener.accept()
        with conn:
            for byte in b"220 slow.example ESMTP and so on and so on\r\n" * 20:
                if stop.is_set():
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.5)

    server = threading.Thread(target=trickle, daemon=True)
    server.start()
    try:
        started = time.monotonic()
        result = EmailChannel(["ops@acme.test"], f"smtp://127.0.0.1:{port}", "alerts@acme.test").send(MESSAGE)
        spent = time.monotonic() - started
    finally:
        stop.set()
        listener.close()
    assert not result.ok and result.retryable
    assert "did not finish within 1.5 s" in (result.error or "")
    assert spent < 4
