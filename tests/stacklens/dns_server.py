"""A real DNS server on loopback for outbound tests, and a stub resolver that asks it.

Each name has a script of A-record answers given in turn (the last one repeats), so a test can make a name's
answer change between two look-ups the way a DNS-rebinding attacker's server does (TTL 0, a public address
first, an internal one next). The server counts the questions it was asked per name.
"""

from __future__ import annotations

import socket
from collections import Counter
from dataclasses import dataclass, field

from dnslib import QTYPE, RCODE, RR, A, DNSRecord
from dnslib.server import BaseResolver, DNSHandler, DNSLogger, DNSServer


@dataclass
class ScriptedDns:
    script: dict[str, list[list[str]]] = field(default_factory=dict)  # name -> IPv4 answers, in turn
    asked: Counter = field(default_factory=Counter)  # name -> questions received
    server: DNSServer | None = None

    def answer(self, name: str, *answers: list[str]) -> None:
        """Answer ``name`` with each of ``answers`` in turn, then the last again."""
        self.script[name] = list(answers)
        self.asked[name] = 0

    @property
    def port(self) -> int:
        assert self.server is not None
        return int(self.server.server.server_address[1])

    def start(self) -> ScriptedDns:
        owner = self

        class Resolver(BaseResolver):
            def resolve(self, request: DNSRecord, handler: DNSHandler) -> DNSRecord:
                reply = request.reply()
                name = str(request.q.qname).rstrip(".").lower()
                answers = owner.script.get(name)
                if answers is None or request.q.qtype != QTYPE.A:
                    reply.header.rcode = RCODE.NXDOMAIN if answers is None else RCODE.NOERROR
                    return reply
                turn = owner.asked[name]
                owner.asked[name] += 1
                for address in answers[min(turn, len(answers) - 1)]:
                    reply.add_answer(RR(name, QTYPE.A, rdata=A(address), ttl=0))
                return reply

        quiet = DNSLogger(log="-request,-reply,-truncated,-error,-recv,-send,-data", prefix=False)
        self.server = DNSServer(Resolver(), address="127.0.0.1", port=0, logger=quiet)
        self.server.start_thread()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server.server.server_close()

    def resolve(self, host: str, port: int) -> list[str]:
        """What a stub resolver pointed at this server answers (``OutboundClient.resolver``'s shape)."""
        del port
        packet = DNSRecord.question(host, "A").send("127.0.0.1", self.port, timeout=2.0)
        reply = DNSRecord.parse(packet)
        if reply.header.rcode != RCODE.NOERROR:
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: {RCODE.get(reply.header.rcode)}")
        return [str(record.rdata) for record in reply.rr if record.rtype == QTYPE.A]
