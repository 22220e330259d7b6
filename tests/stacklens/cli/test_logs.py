"""The composition root's logging: the server packages' records reach stderr once, with their logger name."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator

import pytest

from stacklens.cli.logs import SERVER_LOGGERS, configure_logging


@pytest.fixture
def restore_loggers() -> Iterator[None]:
    saved = {
        name: (logging.getLogger(name).handlers[:], logging.getLogger(name).level) for name in SERVER_LOGGERS
    }
    yield
    for name, (handlers, level) in saved.items():
        logging.getLogger(name).handlers[:] = handlers
        logging.getLogger(name).setLevel(level)


@pytest.mark.usefixtures("restore_loggers")
def test_each_module_logger_reaches_the_stream_once_with_its_name() -> None:
    stream = io.StringIO()
    configure_logging(stream=stream)
    configure_logging(stream=stream)  # a second call replaces the handler, it never doubles the lines
    logging.getLogger("api.routers.ingest").warning("refused %s", "batch")
    logging.getLogger("pipelines.execution").error("run failed")
    logging.getLogger("stacklens.cli.serve").info("serving")
    logging.getLogger("stacklens.cli.serve").debug("not at INFO")
    lines = stream.getvalue().splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "WARNING api.routers.ingest: refused batch",
        "ERROR pipelines.execution: run failed",
        "INFO stacklens.cli.serve: serving",
    ]


@pytest.mark.usefixtures("restore_loggers")
def test_without_a_stream_records_follow_the_current_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging()
    logging.getLogger("dashboards.web").warning("first")
    assert "WARNING dashboards.web: first" in capsys.readouterr().err
    # pytest swaps stderr between phases; the handler writes to the stderr of the moment, never a closed one.
    logging.getLogger("dashboards.web").warning("second")
    assert "WARNING dashboards.web: second" in capsys.readouterr().err


@pytest.mark.usefixtures("restore_loggers")
def test_third_party_loggers_are_left_alone() -> None:
    uvicorn, root = logging.getLogger("uvicorn.error").handlers[:], logging.getLogger().handlers[:]
    configure_logging(stream=io.StringIO())
    assert logging.getLogger("uvicorn.error").handlers == uvicorn
    assert logging.getLogger().handlers == root  # records still propagate; the root is not configured here
