"""A device farm on a local multi-node Ray cluster: two "hosts", each with its own phones and adb server.

Each node of ``ray.cluster_utils.Cluster`` stands for a host: it advertises the
served simulators plugged into it (``adb:ADDRESS``) and its workers reach them
through that host's own private adb server (``ANDROID_ADB_SERVER_PORT`` set for
that node only). The driver runs ``execution.devices=[farm]`` and must get the
same rows as the thread executor on the simulator; when a node leaves mid-run,
its pages finish on the other host, and a resume completes anything left.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from support_adb import AdbHostServer, find_adb
from support_served_sim import ServedSim

from verirank_core.config import load_config, parse_override
from verirank_core.execution_records import ExecutionResult, ExecutionStatus
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.store import read_jsonl, write_jsonl
from verirank_core.trajectories import RunTrajectories
from execution.farm import advertised_devices, farm_config
from execution.stage import execute_run

ray = pytest.importorskip("ray")  # an optional extra, not our code
pytestmark = pytest.mark.slow

ONEPLUS = "imported/oneplus-settings-android11"
PAGES = [
    ("how to turn on dark mode", ["Open the Settings app.", "Tap Display.", "Turn on Dark theme."]),
    ("how to change the ringtone", ["Open Settings.", "Tap Sound.", "Tap Phone ringtone."]),
    ("how to see the android version", ["Open Settings.", "Scroll down and tap About phone.",
                                        "Tap Android version."]),
    ("how to turn on wifi", ["Open Settings.", "Tap Connections.", "Tap Wi-Fi.", "Turn on Wi-Fi."]),
    ("how to reset network settings", ["Open Settings.", "Tap General management.", "Tap Reset.",
                                       "Tap Reset network settings."]),
    ("how to turn on battery saver", ["Open Settings.", "Tap Battery.", "Tap Battery Saver."]),
]
N_COPIES = 4  # each page on several sites: enough pages that a node leaves while some are left


def _make_run(path: Path) -> Path:
    path.mkdir(parents=True)
    write_jsonl(path / "queries.jsonl", [Query(qid=f"q{i}", query=query, app="com.android.settings")
                                         for i, (query, _) in enumerate(PAGES)])
    write_jsonl(path / "extraction.jsonl", [
        Extraction(qid=f"q{i}", url=f"http://site{c}.test/p{i}", rank=c + 1, query=query,
                   status=ExtractionStatus.OK,
                   steps=[GroundedStep(index=j, text=t, xpath=f"/html/body/ol/li[{j + 1}]")
                          for j, t in enumerate(steps)])
        for c in range(N_COPIES) for i, (query, steps) in enumerate(PAGES)])
    return path


def _config(*sets: str):
    return load_config(overrides=[parse_override(s) for s in sets])


def _rows(run: Path) -> dict[str, dict]:
    """Per page, what must not depend on where it ran."""
    out = {}
    for row in read_jsonl(run / "execution.jsonl", ExecutionResult):
        traj = RunTrajectories(run).data(row) if row.status == ExecutionStatus.EXECUTED else {"steps": []}
        out[row.url] = {"status": row.status.value, "stop_reason": row.stop_reason, "f4": row.f4,
                        "judge_detail": row.judge_detail, "deviations": row.deviation_kinds,
                        "actions": [(s["step_index"], s["action"], s["ok"]) for s in traj["steps"]]}
    return out


class Host:
    """A host of the farm: its adb server and the simulated phones plugged into it."""

    def __init__(self, adb: str, workdir: Path, phones: int):
        workdir.mkdir(parents=True)
        self.adb = AdbHostServer(adb, workdir).start()
        self.phones = [ServedSim(ONEPLUS).start() for _ in range(phones)]
        for phone in self.phones:
            self.adb.connect(phone.address)

    @property
    def specs(self) -> list[str]:
        return [f"adb:{phone.address}" for phone in self.phones]

    def node_args(self) -> dict:
        return {"num_cpus": 1, "resources": {spec: 1 for spec in self.specs},
                "env_vars": {"ANDROID_ADB_SERVER_PORT": str(self.adb.port)}}

    def stop(self) -> None:
        for phone in self.phones:
            phone.stop()
        self.adb.stop()


@pytest.fixture(scope="module")
def farm(tmp_path_factory):
    """(cluster, head host, second host, the second host's node) on this machine."""
    from ray.cluster_utils import Cluster

    adb, why = find_adb()
    if adb is None:
        pytest.skip(why)
    tmp = tmp_path_factory.mktemp("farm")
    hosts = [Host(adb, tmp / "host-a", phones=1), Host(adb, tmp / "host-b", phones=2)]
    ray.shutdown()
    cluster = Cluster(initialize_head=True, head_node_args=hosts[0].node_args())
    second = cluster.add_node(**hosts[1].node_args())
    cluster.wait_for_nodes()
    try:
        yield cluster, hosts[0], hosts[1], second
    finally:
        ray.shutdown()
        cluster.shutdown()
        for host in hosts:
            host.stop()


@pytest.fixture(scope="module")
def on_the_simulator(tmp_path_factory) -> dict[str, dict]:
    run = _make_run(tmp_path_factory.mktemp("threads") / "run")
    execute_run(run, _config(f"execution.devices=[sim:{ONEPLUS}]", "execution.executor=threads",
                             "execution.verdict_cache=null"))
    return _rows(run)


def _farm_config(cluster) -> object:
    return _config("execution.devices=[farm]", f"execution.ray_address={cluster.address}",
                   "execution.adb.timeout_s=20", "execution.verdict_cache=null")


def test_the_farm_runs_every_page_on_the_nodes_phones_with_the_thread_executors_verdicts(
        farm, on_the_simulator, tmp_path):
    cluster, a, b, _ = farm
    config = farm_config(_farm_config(cluster))
    assert config.execution.executor == "ray"
    assert config.execution.devices == advertised_devices() == sorted(a.specs + b.specs)
    run = _make_run(tmp_path / "farm")
    counts = execute_run(run, _farm_config(cluster))
    assert counts.get("executed") == len(PAGES) * N_COPIES
    got = _rows(run)
    assert got == on_the_simulator
    # every host's phones took pages: each actor ran on the node that has its phone
    used = {row.device for row in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert any(spec in used for spec in a.specs) and any(spec in used for spec in b.specs), used


def test_a_node_that_leaves_mid_run_loses_nothing_and_a_resume_completes_the_run(
        farm, on_the_simulator, tmp_path):
    cluster, a, b, second = farm
    run = _make_run(tmp_path / "farm")
    errors: list[BaseException] = []

    def execute() -> None:
        try:
            execute_run(run, _farm_config(cluster))
        except BaseException as exc:  # reported by the test thread
            errors.append(exc)

    worker = threading.Thread(target=execute, daemon=True)
    worker.start()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # a few pages are in: the second host leaves
        rows = (run / "execution.jsonl").read_text("utf-8").count("\n") if (run / "execution.jsonl").exists() else 0
        if rows >= 3:
            break
        time.sleep(0.05)
    cluster.remove_node(second)
    worker.join(300)
    assert not worker.is_alive() and not errors, errors
    rows = {row.url: row for row in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    assert len(rows) == len(PAGES) * N_COPIES  # nothing lost: every page has its row
    late = [row for row in rows.values() if row.device in a.specs]
    assert late, "the host that stayed took the pages that were left"
    assert all(row.status in (ExecutionStatus.EXECUTED, ExecutionStatus.DEVICE_FAILED) for row in rows.values())
    # a resume with the host that is left completes the run, with the simulator's verdicts
    execute_run(run, _farm_config(cluster))
    got = _rows(run)
    differ = {url: {k: (v, on_the_simulator[url][k]) for k, v in row.items() if v != on_the_simulator[url][k]}
              for url, row in got.items() if row != on_the_simulator[url]}
    assert not differ, differ
