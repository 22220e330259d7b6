"""The embedded engine's server settings, applied when the engine starts in this process.

The embedded engine (chdb) starts once per process, when its module is first imported, and sizes its global
thread pool then; every pool of the engine (queries, I/O, part loading, merges) borrows its threads from that
pool. Settings passed later in a connection string are shown by ``system.server_settings`` but do not resize
a pool that already exists, so under the demo's load `stacklens serve` kept ~130 idle engine threads it
never gave back. The engine reads one configuration file as it starts, looking first for ``config.xml`` in
the current directory: :func:`start_embedded_engine` writes the settings below to such a file in a private
directory and imports the engine from there. That also keeps a ``config.xml`` that happens to lie in the
operator's working directory from configuring the service's engine.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

# The engine is a server's engine, sized for a server's many cores and clients. The embedded engine serves
# one process on a small host (the service's own threads share its cores), so:
# - the global pool keeps at most 2 idle threads (default 1,000: idle threads never exited); its size stays at
# the default 10,000: every session of the engine keeps long-lived threads of its schedule and background
# pools taken from it, and a process that opens many sessions over its life (the test suite, one warehouse a
# test) reached a cap of 64 and then waited for a thread forever. Idle threads exiting is what bounds the
# count (a server under the demo's load holds ~40);
# - the pools that load, clean and move parts or fetch from replicas (work this single-node engine does little
#   of) get one or two threads instead of 8 to 128, and the I/O pool 4 with none kept idle;
# - background merges run at a lower CPU priority (Linux nice 10) than queries, so a large merge of the
#   insert-time aggregate tables does not slow the ingest inserts, page queries and pipeline ticks beside it;
#   merges still take every idle cycle (needs CAP_SYS_NICE, else the engine leaves it at 0).
_MIB = 1024 * 1024
ENGINE_SERVER_SETTINGS: dict[str, str] = {
    "max_thread_pool_size": "10000",
    "max_thread_pool_free_size": "2",
    "max_io_thread_pool_size": "4",
    "max_io_thread_pool_free_size": "0",
    "max_active_parts_loading_thread_pool_size": "2",
    "max_outdated_parts_loading_thread_pool_size": "1",
    "max_unexpected_parts_loading_thread_pool_size": "1",
    "max_parts_cleaning_thread_pool_size": "2",
    "max_prefixes_deserialization_thread_pool_size": "2",
    "max_prefixes_deserialization_thread_pool_free_size": "0",
    "max_format_parsing_thread_pool_size": "2",
    "max_format_parsing_thread_pool_free_size": "0",
    "max_backups_io_thread_pool_size": "2",
    "max_backups_io_thread_pool_free_size": "0",
    "background_common_pool_size": "2",
    "background_move_pool_size": "1",
    "background_fetches_pool_size": "1",
    "background_buffer_flush_schedule_pool_size": "1",
    "background_distributed_schedule_pool_size": "1",
    "background_message_broker_schedule_pool_size": "1",
    "os_threads_nice_value_merge_mutate": "10",
    # Caches sized for a small host's working set; a server's defaults are GiBs each (5 GiB of marks, of
    # primary indexes and of skip-index marks, 128 MiB of JIT-compiled expressions), which a long-running
    # process fills as it reads every table's parts and keeps. A whole day's marks of the largest table at
    # 10 M page loads take ~2 MiB, so these bounds cost the views nothing (bench/performance.py).
    "mark_cache_size": str(128 * _MIB),
    "index_mark_cache_size": str(32 * _MIB),
    "primary_index_cache_size": str(64 * _MIB),
    "query_condition_cache_size": str(16 * _MIB),
    "compiled_expression_cache_size": str(32 * _MIB),
    "text_index_tokens_cache_size": str(16 * _MIB),
    "text_index_header_cache_size": str(16 * _MIB),
    "text_index_postings_cache_size": str(16 * _MIB),
    "parquet_metadata_cache_size": str(16 * _MIB),
    "vector_similarity_index_cache_size": str(16 * _MIB),
}

# The engine's memory allocator (its own jemalloc, configured by JE_MALLOC_CONF as its library loads) keeps
# one arena per core, each with the pages its threads freed, for reuse by the same arena. A pipeline run and
# the drains beside it are chains of statements of 10–70 MiB each on whichever pool thread takes them, so
# the pages one statement freed were often in the other arena and piled up there: one arena reuses them
# whichever thread comes next, and a purge after each pipeline statement and each large drain
# (stacklens.warehouse.client.give_back_engine_memory) returns the rest. `stacklens pipelines backfill` of
# the demo's 35 days: max RSS 561–573 MiB, 527–532 with the purges; building the demo's history
# (bench/footprint.py) peaked at 652/663 MiB with both, 686–772 before, at the same CPU per insert
# (bench/drain_insert.py). A host of two cores, whose two arenas saw little contention, is what the embedded
# engine is for (a larger one runs a ClickHouse server). Freeing pages at once instead (``dirty_decay_ms:0``)
# peaked at 634–673 MiB but cost each small insert 35–50 % more CPU. An operator's own JE_MALLOC_CONF is kept.
ENGINE_ALLOCATOR_CONF = "percpu_arena:disabled,narenas:1"
_ALLOCATOR_ENV = "JE_MALLOC_CONF"
_ENGINE_MODULE = "chdb"
_start_lock = threading.Lock()


def engine_config_xml(settings: dict[str, str]) -> str:
    """The engine's configuration file holding ``settings`` as top-level server settings."""
    lines = [f"  <{name}>{escape(value)}</{name}>" for name, value in settings.items()]
    return "<clickhouse>\n" + "\n".join(lines) + "\n</clickhouse>\n"


def engine_started() -> bool:
    """Whether the embedded engine already runs in this process (its settings are then fixed)."""
    return _ENGINE_MODULE in sys.modules


def start_embedded_engine() -> None:
    """Start the embedded engine in this process with :data:`ENGINE_SERVER_SETTINGS`, once.

    Called before the first embedded client opens. The working directory is the engine's only place to be
    told its settings as it starts, so it is changed for the import and restored at once; this runs under a
    lock, and the warehouse is opened while the service starts, before its request and pipeline threads run.
    When the engine was already imported by other code, its settings stay as they were.
    """
    with _start_lock:
        if engine_started():
            return
        with tempfile.TemporaryDirectory(prefix="stacklens-engine-") as private:
            Path(private, "config.xml").write_text(
                engine_config_xml(ENGINE_SERVER_SETTINGS), encoding="utf-8"
            )
            previous = os.getcwd()
            os.chdir(private)
            try:
                with _arrow_unavailable(), _allocator_configured():
                    importlib.import_module(_ENGINE_MODULE)
                    importlib.import_module(f"{_ENGINE_MODULE}.state")  # what its ``connect`` imports
            finally:
                os.chdir(previous)


@contextlib.contextmanager
def _allocator_configured() -> Iterator[None]:
    """:data:`ENGINE_ALLOCATOR_CONF` in the environment while the engine's library loads (its allocator reads
    it once, then), unless the operator set their own; taken out again after, so the processes this one
    starts (ingest workers, browsers in tests) do not inherit it."""
    if _ALLOCATOR_ENV in os.environ:
        yield
        return
    os.environ[_ALLOCATOR_ENV] = ENGINE_ALLOCATOR_CONF
    try:
        yield
    finally:
        os.environ.pop(_ALLOCATOR_ENV, None)


@contextlib.contextmanager
def _arrow_unavailable() -> Iterator[None]:
    """pyarrow made unimportable while the engine's modules are imported.

    The engine's connection module (``chdb.state``, which the package itself imports since chdb 4.4 and its
    ``connect`` imports in any release) imports pyarrow, if it is installed, only for its Arrow results
    (``ArrowTable`` output, ``record_batch``), and works without it; clickhouse-connect reads the engine's
    Native format and never asks for Arrow. pyarrow and the numpy it brings hold ~40 MiB resident, which the
    server would carry from its start for nothing: it is loaded by the first Explore download that writes
    Parquet instead. Where pyarrow is loaded already (a test process, a notebook), the engine's modules take
    it as usual. An entry of ``None`` in ``sys.modules`` makes an import raise ImportError; it is there only
    while the modules are imported, under the start lock, before the service's threads run.
    """
    if "pyarrow" in sys.modules:
        yield
        return
    sys.modules["pyarrow"] = None  # type: ignore[assignment]  # "not importable", for this import only
    try:
        yield
    finally:
        if "pyarrow" in sys.modules and sys.modules["pyarrow"] is None:
            del sys.modules["pyarrow"]


# madvise(2) advice: drop this process's mappings of the range (a private file mapping's clean pages come back
# from the page cache, unchanged, when next used); read the range's pages one at a time, without read-ahead.
_MADV_DONTNEED = 4
_MADV_RANDOM = 1


# The library's read-only mappings without a written page, found once the engine has started: a read-only
# mapping gets no written page later, so :func:`release_library_pages` unmaps them again without reading
# smaps.
_clean_ranges: list[tuple[int, int]] = []


def release_start_pages() -> int:
    """Unmap the embedded engine library's clean pages from this process once it has started; returns the KiB
    released (0 where the engine is not loaded or this is not Linux).

    The library is ~530 MiB of machine code and read-only data. Starting the engine (its static
    initialisers register every function, format and setting) and the first statements touch code all over
    it, and the kernel maps file pages around each touch (fault-around, and whole large page-cache folios of
    up to 2 MiB where the file system keeps them): a freshly started server holds ~290 MiB of the library
    resident, most of it code that runs once. Those pages are clean copies of the file; unmapped here, the
    code the service goes on running maps back, a page at a time (:func:`_read_page_by_page`), and the rest
    stays out of the process. Only mappings without a written page are released (the relocated ones keep
    every page): nothing this process changed is dropped.
    """
    if not engine_started() or not sys.platform.startswith("linux"):
        return 0
    import importlib.util

    spec = importlib.util.find_spec(f"{_ENGINE_MODULE}._chdb")
    if spec is None or not spec.origin:
        return 0
    library = os.path.realpath(spec.origin)  # as /proc names it
    try:
        smaps = Path("/proc/self/smaps").read_text()
    except OSError:
        return 0
    mappings = _clean_mappings(smaps, library)
    _clean_ranges[:] = [(start, end) for start, end, _ in mappings]
    released = sum(resident for start, end, resident in mappings if _unmap(start, end))
    _read_page_by_page(library, _clean_ranges)
    return released


def _read_page_by_page(library: str, ranges: list[tuple[int, int]]) -> None:
    """From now on the code of ``ranges`` comes back in pages of 4 KiB, not in whole large folios.

    The kernel's page cache holds a file read with read-ahead in large folios (up to 2 MiB), and a fault in a
    file mapping maps the whole folio around the page it needs (Linux 6.18): the few KiB of code a statement
    runs in a region brought 0.5–2 MiB of its neighbours into the process, so one statement mapped back ~115
    MiB of the library and a drain or a pipeline tick 200–320 MiB. Advised random, a fault reads only the page
    it needs; the library's pages no process maps are dropped from the page cache, so what comes back is read
    again in small folios (measured: four statements map back 84–96 MiB instead of 151, 4 KiB reads of
    ~60 µs the first time each page runs). Pages another process maps stay as they are."""
    madvise = _madvise()
    if madvise is None or not ranges:
        return
    for start, end in ranges:
        madvise(start, end - start, _MADV_RANDOM)
    try:
        descriptor = os.open(library, os.O_RDONLY)
    except OSError:
        return
    try:
        os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(descriptor)


def release_library_pages() -> bool:
    """Unmap the clean pages of the engine's library again (those :func:`release_start_pages` found); True
    when there were some. Called while serving after each purge beat that found warehouse calls, and every
    half minute (stacklens/cli/serve.py): one statement maps back ~100 MiB of the library (whole large
    folios around the code it runs), a pipeline tick ~160 MiB, and the process kept them until it ended.
    The code the next statements run maps back from the page cache in a few hundred minor faults (measured
    1–40 ms of CPU on the next statement); nothing is read from disk while the file stays cached."""
    try:  # only ranges still mapped read-only as found (/proc/self/maps costs ~1 ms, smaps ~50 ms)
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return False
    read_only = {
        tuple(int(part, 16) for part in fields[0].split("-"))
        for fields in (line.split() for line in maps.splitlines())
        if len(fields) >= 2 and fields[1] in ("r-xp", "r--p")
    }
    ranges = [(start, end) for start, end in _clean_ranges if (start, end) in read_only]
    return bool(ranges) and all(_unmap(start, end) for start, end in ranges)


def _unmap(start: int, end: int) -> bool:
    madvise = _madvise()
    return madvise is not None and madvise(start, end - start, _MADV_DONTNEED) == 0


@functools.cache
def _madvise() -> Any | None:
    import ctypes

    try:
        madvise = ctypes.CDLL(None, use_errno=True).madvise
    except (OSError, AttributeError):
        return None
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return madvise


def _clean_mappings(smaps: str, path: str) -> list[tuple[int, int, int]]:
    """(start, end, resident KiB) of each read-only mapping of ``path`` in ``smaps`` with no written page."""
    found: list[tuple[int, int, int]] = []
    current: dict[str, Any] | None = None

    def close() -> None:
        if current is not None and current["dirty"] == 0 and current["anonymous"] == 0:
            found.append((current["start"], current["end"], current["rss"]))

    for line in smaps.splitlines():
        fields = line.split()
        if fields and "-" in fields[0] and len(fields) >= 5 and len(fields[1]) == 4:  # a mapping's header
            close()
            current = None
            if len(fields) >= 6 and fields[5] == path and fields[1] in ("r-xp", "r--p"):
                low, high = (int(part, 16) for part in fields[0].split("-"))
                current = {"start": low, "end": high, "rss": 0, "dirty": 0, "anonymous": 0}
        elif current is not None and len(fields) >= 2:
            if fields[0] == "Rss:":
                current["rss"] = int(fields[1])
            elif fields[0] in ("Private_Dirty:", "Shared_Dirty:"):
                current["dirty"] += int(fields[1])
            elif fields[0] == "Anonymous:":
                current["anonymous"] = int(fields[1])
    close()
    return found
