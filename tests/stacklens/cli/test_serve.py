from __future__ import annotations

import socket

from stacklens.cli.main import main
from stacklens.settings import Settings


def test_serve_refuses_a_busy_port_in_one_line(settings: Settings, capsys) -> None:  # type: ignore[no-untyped-def]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["serve", "--port", str(port)]) == 2
        assert main(["up", "--port", str(port)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(f"cannot listen on 127.0.0.1:{port}" in line for line in err)
