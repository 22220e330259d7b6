from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from stacklens.outbound.client import OutboundClient
from stacklens.outbound.guard import AllowList, OutboundRefused
from tests.stacklens.alerts.receiver import Receiver
from tests.stacklens.dns_server import ScriptedDns
from tests.stacklens.outbound_forms import LOOPBACK_FORMS


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


def test_allowed_loopback_receiver_gets_the_post(receiver: Receiver) -> None:
    client = OutboundClient(allow=AllowList.parse("127.0.0.1"))
    response = client.post(receiver.url, b'{"a": 1}', {"content-type": "application/json"})
    assert response.ok and response.status == 200 and response.excerpt == "ok"
    assert receiver.received[0].body == b'{"a": 1}'


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.1.2.3",
        "169.254.169.254",
        "192.168.0.10",
        "172.16.5.5",
        "::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "0.0.0.0",
    ],
)
def test_internal_addresses_are_refused_before_connecting(address: str) -> None:
    calls: list[str] = []

    def resolver(host: str, port: int) -> list[str]:
        calls.append(host)
        return [address]

    client = OutboundClient(resolver=resolver)
    client._send = lambda *a: pytest.fail("a refused target must never be connected to")
    with pytest.raises(OutboundRefused, match="STACKLENS_OUTBOUND_ALLOW"):
        client.post("http://hooks.example.test/x", b"{}", {})
    assert calls == ["hooks.example.test"]


def test_every_resolved_address_is_checked() -> None:
    client = OutboundClient(resolver=lambda h, p: ["93.184.215.14", "10.0.0.7"])
    with pytest.raises(OutboundRefused, match=r"10.0.0.7"):
        client.check("https://mixed.example.test/")


def test_real_resolution_of_localhost_is_refused_unless_allowed(receiver: Receiver) -> None:
    with pytest.raises(OutboundRefused, match="loopback"):
        OutboundClient().post(receiver.url.replace("127.0.0.1", "localhost"), b"{}", {})
    assert receiver.received == []
    allowed = OutboundClient(allow=AllowList.parse("localhost"))
    assert allowed.post(receiver.url.replace("127.0.0.1", "localhost"), b"{}", {}).ok
    by_cidr = OutboundClient(allow=AllowList.parse("10.0.0.0/8, 127.0.0.0/8"))
    assert by_cidr.post(receiver.url, b"{}", {}).ok


def test_public_address_passes_the_guard() -> None:
    assert OutboundClient(resolver=lambda h, p: ["93.184.215.14"]).check("https://example.test/")


@pytest.mark.parametrize(
    "url", ["ftp://x.test/", "file:///etc/passwd", "http:///nohost", "javascript:alert(1)"]
)
def test_bad_urls_are_refused_with_a_reason(url: str) -> None:
    with pytest.raises(OutboundRefused, match="url"):
        OutboundClient().check(url)


def test_timeouts_raise_and_retry_after_is_parsed(receiver: Receiver) -> None:
    receiver.answer(200, stall_s=1.5)
    client = OutboundClient(allow=AllowList.parse("127.0.0.1"), timeout_s=0.5)
    with pytest.raises(httpx.TimeoutException):
        client.post(receiver.url, b"{}", {})
    receiver.answer(429, {"Retry-After": "120"})
    response = OutboundClient(allow=AllowList.parse("127.0.0.1")).post(receiver.url, b"{}", {})
    assert response.status == 429 and response.retryable and response.retry_after_s == 120


def test_in_call_retries_honour_retry_after(receiver: Receiver) -> None:
    receiver.answer(503)
    receiver.answer(429, {"Retry-After": "7"})
    waits: list[float] = []
    response = OutboundClient(allow=AllowList.parse("127.0.0.1")).post(
        receiver.url, b"{}", {}, retries=3, sleep=waits.append
    )
    assert response.ok and len(receiver.received) == 3
    assert 15 <= waits[0] <= 30 and waits[1] >= 7


# --- Literal hosts, embedded IPv4, pinned connections -------------------------------------------------------


@pytest.fixture(scope="module")
def shared_receiver() -> Iterator[Receiver]:
    r = Receiver().start()
    yield r
    r.stop()


@pytest.fixture
def quiet_receiver(shared_receiver: Receiver) -> Receiver:
    """One receiver for the many literal-form cases (each stop waits out a 0.5 s poll), emptied per case."""
    shared_receiver.received.clear()
    return shared_receiver


@pytest.mark.parametrize(("host", "reason"), LOOPBACK_FORMS)
def test_every_literal_form_of_loopback_is_refused_at_send(
    quiet_receiver: Receiver, host: str, reason: str
) -> None:
    receiver = quiet_receiver
    port = receiver.url.split(":")[2].split("/")[0]
    asked: list[str] = []
    client = OutboundClient(resolver=lambda h, p: asked.append(h) or ["93.184.215.14"])
    with pytest.raises(OutboundRefused) as refused:
        client.post(f"http://{host}:{port}/hook", b"{}", {})
    assert str(refused.value) == f"{reason}; add it to STACKLENS_OUTBOUND_ALLOW to allow it"
    assert receiver.received == [] and asked == []  # a literal is never sent to DNS


@pytest.mark.parametrize("host", ["2130706433", "0x7f000001", "127.1", "017700000001", "0x7f.0.0.1"])
def test_an_allowed_literal_form_connects_to_the_address_it_means(
    quiet_receiver: Receiver, host: str
) -> None:
    receiver = quiet_receiver
    port = receiver.url.split(":")[2].split("/")[0]
    client = OutboundClient(allow=AllowList.parse("127.0.0.0/8"))
    assert client.post(f"http://{host}:{port}/hook", b"{}", {}).ok
    assert receiver.received[0].headers["host"] == f"{host}:{port}"  # the URL's host, as typed


@dataclass
class Landing:
    """HTTP listeners on one port of several loopback addresses; each request records where it landed."""

    addresses: tuple[str, ...]
    hits: list[tuple[str, str]] = field(default_factory=list)  # (address it landed on, Host header)
    servers: list[ThreadingHTTPServer] = field(default_factory=list)

    @property
    def port(self) -> int:
        return int(self.servers[0].server_address[1])

    def start(self) -> Landing:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length") or 0))
                owner.hits.append((self.server.server_address[0], self.headers.get("host", "")))
                self.send_response(200)
                self.send_header("content-length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: object) -> None:
                pass

        for _ in range(20):  # the port picked on the first address may be taken on another one
            first = ThreadingHTTPServer((self.addresses[0], 0), Handler)
            try:
                rest = [
                    ThreadingHTTPServer((a, first.server_address[1]), Handler) for a in self.addresses[1:]
                ]
            except OSError:
                first.server_close()
                continue
            self.servers = [first, *rest]
            break
        for server in self.servers:
            server.daemon_threads = True
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()


@pytest.fixture
def dns() -> Iterator[ScriptedDns]:
    server = ScriptedDns().start()
    yield server
    server.stop()


def test_dns_rebinding_cannot_reach_the_internal_address(dns: ScriptedDns) -> None:
    """The attacker's DNS answers an allowed address (127.0.0.2 stands for a public one) and then an
    internal one (127.0.0.1), with TTL 0. Each attempt asks DNS once, checks that answer, and connects to
    exactly that address: the internal listener on the same port never sees a request."""
    landing = Landing(("127.0.0.2", "127.0.0.1")).start()
    try:
        name = "hooks.rebind.test"
        dns.answer(name, ["127.0.0.2"], ["127.0.0.1"], ["127.0.0.2"], ["127.0.0.2", "127.0.0.1"])
        client = OutboundClient(allow=AllowList.parse("127.0.0.2/32"), resolver=dns.resolve)
        url = f"http://{name}:{landing.port}/hook"
        assert client.post(url, b"{}", {}).ok
        assert landing.hits == [("127.0.0.2", f"{name}:{landing.port}")] and dns.asked[name] == 1
        with pytest.raises(OutboundRefused, match=r"resolves to 127\.0\.0\.1, a loopback address"):
            client.post(url, b"{}", {})
        assert client.post(url, b"{}", {}).ok
        with pytest.raises(OutboundRefused, match=r"127\.0\.0\.1"):  # one bad address among good ones
            client.post(url, b"{}", {})
        assert dns.asked[name] == 4  # one question per attempt: nothing resolves the name a second time
        assert [address for address, _host in landing.hits] == ["127.0.0.2", "127.0.0.2"]
        dns.answer(name, ["127.0.0.1"])
        with pytest.raises(OutboundRefused):  # retries check again before every attempt
            client.post(url, b"{}", {}, retries=2, sleep=lambda s: None)
        assert len(landing.hits) == 2 and dns.asked[name] == 1
    finally:
        landing.stop()


def test_an_unknown_name_does_not_resolve(dns: ScriptedDns) -> None:
    with pytest.raises(OutboundRefused, match=r"'nowhere.test' does not resolve"):
        OutboundClient(resolver=dns.resolve).post("http://nowhere.test/", b"{}", {})


def _certificates(tmp_path: Path, name: str) -> tuple[Path, Path, Path]:
    """A throwaway CA (its PEM) and a server certificate and key for ``name`` signed by it."""
    now = datetime.now(UTC)

    def build(subject: str, issuer: str, public_key, signing_key, ca: bool) -> x509.Certificate:
        builder = (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
            .public_key(public_key)
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
        )
        if ca:
            builder = builder.add_extension(
                x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
            )
        else:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.DNSName(subject)]), critical=False
            ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            builder = builder.add_extension(
                x509.AuthorityKeyIdentifier.from_issuer_public_key(signing_key.public_key()), critical=False
            )
        return builder.sign(signing_key, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = build("Outbound test CA", "Outbound test CA", ca_key.public_key(), ca_key, True)
    leaf = build(name, "Outbound test CA", key.public_key(), ca_key, False)
    paths = tmp_path / "ca.pem", tmp_path / "server.pem", tmp_path / "server.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    return paths


def test_https_connects_to_the_checked_address_with_sni_and_verification_for_the_name(
    dns: ScriptedDns, tmp_path: Path
) -> None:
    name = "hooks.tls.test"
    ca_pem, cert_pem, key_pem = _certificates(tmp_path, name)
    landing = Landing(("127.0.0.2",)).start()
    server_names: list[str | None] = []
    tls_server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls_server.load_cert_chain(cert_pem, key_pem)
    tls_server.sni_callback = lambda sock, server_name, ctx: server_names.append(server_name)
    server = landing.servers[0]
    server.socket = tls_server.wrap_socket(server.socket, server_side=True)
    try:
        dns.answer(name, ["127.0.0.2"])
        dns.answer("other.tls.test", ["127.0.0.2"])
        trusting = ssl.create_default_context(cafile=str(ca_pem))
        client = OutboundClient(allow=AllowList.parse("127.0.0.2"), resolver=dns.resolve, tls=trusting)
        assert client.post(f"https://{name}:{landing.port}/hook", b"{}", {}).ok
        assert landing.hits == [("127.0.0.2", f"{name}:{landing.port}")] and server_names == [name]
        # The certificate is checked against the URL's name, not the address connected to …
        with pytest.raises(httpx.ConnectError, match="certificate verify failed"):
            client.post(f"https://other.tls.test:{landing.port}/hook", b"{}", {})
        # … and against the trusted roots: the default bundle does not know the test CA.
        default = OutboundClient(allow=AllowList.parse("127.0.0.2"), resolver=dns.resolve)
        with pytest.raises(httpx.ConnectError, match="certificate verify failed"):
            default.post(f"https://{name}:{landing.port}/hook", b"{}", {})
        assert len(landing.hits) == 1
    finally:
        landing.stop()
