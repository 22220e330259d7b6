"""The embedded engine's server settings: applied as the engine starts, whatever the working directory
holds."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from stacklens.settings import Settings
from stacklens.warehouse.client import ensure_database, get_warehouse
from stacklens.warehouse.engine import ENGINE_SERVER_SETTINGS, engine_config_xml

ROOT = Path(__file__).resolve().parents[3]

# Run in a fresh interpreter: the engine starts once per process, and the test process's engine started long
# before this test. Sequential queries that each ask for 16 threads leave idle threads in the engine's global
# pool; with the engine's defaults (1,000 idle threads kept) all of them stay.
_PROBE = textwrap.dedent(
    """
    import json, os, sys
    from stacklens.warehouse.client import warehouse_client
    before = os.getcwd()
    client = warehouse_client("chdb://" + sys.argv[1], "default")
    client.command("CREATE TABLE t (a UInt64, b String) ENGINE = MergeTree ORDER BY a")
    client.command("INSERT INTO t SELECT number, toString(number) FROM numbers(2000000)")
    for _ in range(6):
        client.query("SELECT b, count() FROM t GROUP BY b ORDER BY count() DESC LIMIT 1 SETTINGS max_threads = 16")
    metrics = dict(client.query(
        "SELECT metric, value FROM system.metrics WHERE metric IN ('GlobalThread', 'GlobalThreadActive')"
    ).result_rows)
    print(json.dumps({
        "cwd_kept": os.getcwd() == before,
        "pool": metrics["GlobalThread"],
        "busy": metrics["GlobalThreadActive"],
        "threads": len(os.listdir("/proc/self/task")),
        "allocator": _ALLOCATOR,
    }))
    """
)
# The allocator's options as the engine's own statistics print them, and whether the variable that set them
# is left in the environment (what the processes the service starts inherit).
_ALLOCATOR_PROBE = textwrap.dedent(
    """
    from stacklens.warehouse.client import warehouse_client
    stats = warehouse_client("chdb://" + sys.argv[1], "default").query(
        "SELECT * FROM system.jemalloc_stats"
    ).result_rows[0][0]
    _ALLOCATOR = {
        "options": [line.strip() for line in stats.splitlines() if line.strip().startswith("opt.")],
        "env_after": os.environ.get("JE_MALLOC_CONF"),
    }
    """
)
_PROBE = _PROBE.replace("import json, os, sys\n", "import json, os, sys\n" + _ALLOCATOR_PROBE, 1)


def test_engine_config_holds_each_setting_once() -> None:
    xml = engine_config_xml({"max_thread_pool_free_size": "2", "odd": "a<b&c"})
    assert xml.count("<max_thread_pool_free_size>2</max_thread_pool_free_size>") == 1
    assert "<odd>a&lt;b&amp;c</odd>" in xml
    assert xml.startswith("<clickhouse>") and xml.rstrip().endswith("</clickhouse>")


def test_idle_engine_threads_exit_even_with_a_config_xml_in_the_working_directory(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    # A ClickHouse configuration lying where the operator starts the service must not size its engine.
    (work / "config.xml").write_text(
        "<clickhouse><max_thread_pool_free_size>1000</max_thread_pool_free_size></clickhouse>",
        encoding="utf-8",
    )
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(tmp_path / "warehouse")],
        cwd=work,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["cwd_kept"]
    idle = seen["pool"] - seen["busy"]
    assert idle <= int(ENGINE_SERVER_SETTINGS["max_thread_pool_free_size"]), seen
    # Six queries of 16 threads each kept ~50 threads with the engine's defaults.
    assert seen["threads"] <= 40, seen
    # One arena for every thread (the engine's default: one per core), and no child inherits the setting.
    assert {"opt.narenas: 1", 'opt.percpu_arena: "disabled"'} <= set(seen["allocator"]["options"]), seen[
        "allocator"
    ]
    assert seen["allocator"]["env_after"] is None


def test_an_operators_allocator_options_are_kept(tmp_path: Path) -> None:
    probe = "import json, os, sys\n" + _ALLOCATOR_PROBE + "print(json.dumps(_ALLOCATOR))"
    result = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path / "warehouse")],
        cwd=tmp_path,
        env={
            "PYTHONPATH": str(ROOT),
            "PATH": "/usr/bin:/bin",
            "HOME": str(tmp_path),
            "JE_MALLOC_CONF": "dirty_decay_ms:7000",
        },
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert "opt.dirty_decay_ms: 7000 (arenas.dirty_decay_ms: 7000)" in seen["options"], seen
    assert seen["env_after"] == "dirty_decay_ms:7000"


def test_embedded_engine_runs_merges_at_a_lower_cpu_priority(settings: Settings) -> None:
    ensure_database(settings)
    client = get_warehouse(settings)
    value = client.query(
        "SELECT value FROM system.server_settings WHERE name = 'os_threads_nice_value_merge_mutate'"
    ).result_rows[0][0]
    assert int(value) == 10


def test_embedded_engine_caches_are_sized_for_a_small_host(settings: Settings) -> None:
    ensure_database(settings)
    client = get_warehouse(settings)
    names = ("mark_cache_size", "primary_index_cache_size", "compiled_expression_cache_size")
    rows = client.query(
        "SELECT name, value FROM system.server_settings WHERE name IN {names:Array(String)}",
        parameters={"names": list(names)},
    ).result_rows
    assert {name: int(value) for name, value in rows} == {
        name: int(ENGINE_SERVER_SETTINGS[name]) for name in names
    }
    assert int(ENGINE_SERVER_SETTINGS["mark_cache_size"]) <= 128 * 1024 * 1024


# A fresh interpreter: the engine's start-up pages are what is released, and the test process's engine has
# run many statements since its start.
_RELEASE_PROBE = textwrap.dedent(
    """
    import json, sys
    from stacklens.warehouse.client import warehouse_client
    from stacklens.warehouse.engine import release_library_pages, release_start_pages

    def file_kib():
        for line in open("/proc/self/status"):
            if line.startswith("RssFile:"):
                return int(line.split()[1])

    def random_read_mib():  # the library's mappings advised to read page by page ('rr' in smaps' VmFlags)
        total, size, library = 0, 0, False
        for line in open("/proc/self/smaps"):
            fields = line.split()
            if fields and "-" in fields[0] and len(fields[1]) == 4:
                low, high = (int(part, 16) for part in fields[0].split("-"))
                size, library = high - low, fields[-1].endswith(".so") and "/chdb/" in fields[-1]
            elif fields and fields[0] == "VmFlags:" and library and "rr" in fields[1:]:
                total += size
        return total >> 20

    client = warehouse_client("chdb://" + sys.argv[1], "default")
    client.command("CREATE TABLE t (a UInt64, b String) ENGINE = MergeTree ORDER BY a")
    client.command("INSERT INTO t SELECT number, toString(number) FROM numbers(100000)")
    before = file_kib()
    advised_before = random_read_mib()
    released = release_start_pages()
    after = file_kib()
    advised = random_read_mib()
    # The engine goes on: the code it runs maps back in, the answers are the same.
    client.command("INSERT INTO t SELECT number, toString(number) FROM numbers(100000, 1000)")
    answer = client.query("SELECT count(), sum(a), max(length(b)) FROM t").result_rows[0]
    again = release_start_pages()
    kept = file_kib()
    # The half-minute release while serving: what the statements since mapped back goes again.
    client.query("SELECT b, count() FROM t GROUP BY b ORDER BY count() DESC, b LIMIT 3")
    mapped_back = file_kib()
    periodic = release_library_pages()
    periodic_after = file_kib()
    answer_after = client.query("SELECT count(), sum(a), max(length(b)) FROM t").result_rows[0]
    print(json.dumps({"before": before, "released": released, "after": after, "answer": list(answer),
                      "advised_before": advised_before, "advised": advised,
                      "again": again, "mappings_kept": kept, "mapped_back": mapped_back,
                      "periodic": periodic, "periodic_after": periodic_after, "answer_after": list(answer_after)}))
    """
)


def test_the_engine_start_up_pages_are_released_and_the_engine_runs_on(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _RELEASE_PROBE, str(tmp_path / "warehouse")],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    # ~250 MiB of the library is resident after the start and two statements; most of it is given back.
    assert seen["released"] > 100 * 1024, seen
    assert seen["before"] - seen["after"] > 100 * 1024, seen
    assert seen["answer"] == [101_000, sum(range(100_000)) + sum(range(100_000, 101_000)), 6]
    assert 0 < seen["again"] < seen["released"], seen  # only what the later statements mapped back
    mapped_back = seen["mapped_back"] - seen["mappings_kept"]
    assert seen["periodic"] and mapped_back > 0, seen
    assert seen["mapped_back"] - seen["periodic_after"] > mapped_back // 2, seen
    assert seen["answer_after"] == seen["answer"]
    # The released code comes back page by page, not in whole large folios of the page cache.
    assert seen["advised_before"] == 0 and seen["advised"] > 400, seen
