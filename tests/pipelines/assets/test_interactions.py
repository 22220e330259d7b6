"""The `inp_interactions` asset and its states: in the graph with their checks, in the performance job, and
the projects' own hosts passed to its query aligned by project."""

from __future__ import annotations

from pipelines.assets.interactions import host_parameters
from pipelines.definitions import defs
from pipelines.jobs import PARTITIONED_JOB_INPUTS, PERFORMANCE_ASSETS


def test_the_asset_is_in_the_graph_and_the_performance_job() -> None:
    keys = {spec.key.to_user_string() for spec in defs.resolve_all_asset_specs()}
    assert "inp_interactions" in keys and "inp_interactions" in PERFORMANCE_ASSETS
    assert "inp_interactions" in PARTITIONED_JOB_INPUTS["performance_job"][0]
    # Its hour and day states, written by the same step (the INP view reads them).
    for states in ("inp_periods", "inp_script_periods"):
        assert states in keys and states in PERFORMANCE_ASSETS


def test_hosts_are_aligned_with_their_projects() -> None:
    assert host_parameters({9: ["b.test"], 3: ["a.test", "c.test:81"]}) == {
        "fp_projects": [3, 9],
        "fp_hosts": [["a.test", "c.test:81"], ["b.test"]],
    }
    assert host_parameters({}) == {"fp_projects": [], "fp_hosts": []}
