"""The runner on every device path and executor: the same pages give the same records.

Devices here are a phone's code path: the simulator served by ``verirank sim
serve`` (a child process), reached through a private adb server and adbutils
(``adb:127.0.0.1:PORT``). A served device is killed with SIGKILL to play a
phone that vanishes mid-run.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from support_adb import wait_until
from support_served_sim import ServedSim

from verirank_core.execution_records import ExecutionResult
from verirank_core.trajectories import RunTrajectories
from execution.executors import choose_executor
from execution.stage import execute_run
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.config import load_config, parse_override
from verirank_core.store import read_jsonl, write_jsonl

WORLD = "android13-settings"
QUERY = "how to turn on dark mode"
GOOD = ["Open Settings", "Tap Display", "Turn on Dark theme"]
WRONG = ["Open Settings", "Tap Wallpaper & style", "Tap Themes", "Select the Night theme"]
#: taps the switch without saying "on": its verdict depends on whether dark theme was already on
TAP_SWITCH = ["Open Settings", "Tap Display", "Tap Dark theme", "Tap Use Dark theme"]
#: what differs between two runs of the same page
TIMINGS = ("elapsed_s",)


def _extraction(url: str, rank: int, steps: list[str]) -> Extraction:
    return Extraction(
        qid="q1", url=url, rank=rank, query=QUERY,
        status=ExtractionStatus.OK if steps else ExtractionStatus.NO_STEPS,
        reason="" if steps else "no step block relevant to the query",
        steps=[GroundedStep(index=i, text=t, xpath=f"/html/body/ol/li[{i + 1}]") for i, t in enumerate(steps)],
    )


def _make_run(path: Path, pages: list[list[str]]) -> Path:
    path.mkdir(parents=True)
    write_jsonl(path / "queries.jsonl", [Query(qid="q1", query=QUERY, app="com.android.settings")])
    write_jsonl(path / "extraction.jsonl",
                [_extraction(f"http://site.test/p{i}", i + 1, steps) for i, steps in enumerate(pages)])
    return path


def _config(*sets: str):
    return load_config(overrides=[parse_override(s) for s in sets])


def _adb_config(adb_host, addresses: list[str], *sets: str):
    devices = ", ".join(f"adb:{a}" for a in addresses)
    return _config(f"execution.devices=[{devices}]", f"execution.adb.adb_port={adb_host.port}",
                   "execution.adb.timeout_s=15", *sets)


def _rows(run: Path) -> dict[str, dict]:
    """execution.jsonl by URL, timings dropped; fails on a duplicated page."""
    rows = [r.to_json_dict() for r in read_jsonl(run / "execution.jsonl", ExecutionResult)]
    by_url = {r["url"]: {k: v for k, v in r.items() if k not in TIMINGS} for r in rows}
    assert len(by_url) == len(rows), "a page was recorded twice"
    return by_url


@pytest.fixture
def serve(adb_host):
    """Factory: ``verirank sim serve WORLD`` in a child process, connected to the private adb server."""
    started: list[ServedSim] = []

    def start(world: str = WORLD) -> ServedSim:
        sim = ServedSim(world).start()
        started.append(sim)
        adb_host.connect(sim.address)
        return sim

    yield start
    for sim in started:
        adb_host.disconnect(sim.address)
        sim.stop()


def _fresh(adb_host, sim: ServedSim) -> None:
    """Clear the served phone's app data (``pm clear`` resets the simulated world)."""
    done = adb_host.run("-s", sim.address, "shell", "pm clear com.android.settings")
    assert b"Success" in done.stdout, done


# -- executors --------------------------------------------------------------------

def test_auto_executor_uses_processes_for_several_simulators_and_threads_for_adb() -> None:
    assert choose_executor(_config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]")) == "processes"
    assert choose_executor(_config(f"execution.devices=[sim:{WORLD}]")) == "threads"
    assert choose_executor(_config("execution.devices=[adb:a, adb:b]")) == "threads"
    # a device opener built in this process cannot cross into another one
    assert choose_executor(_config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]"), injected=True) == "threads"
    # a short job is done sooner in this process than by cold worker processes
    two = f"execution.devices=[sim:{WORLD}, sim:{WORLD}]"
    assert choose_executor(_config(two), pages=79) == "threads"
    assert choose_executor(_config(two), pages=80) == "processes"
    assert choose_executor(_config(two, "execution.process_min_pages=0"), pages=1) == "processes"
    assert choose_executor(_config(two, "execution.executor=processes"), pages=1) == "processes"


def test_threads_and_processes_give_the_same_records_on_the_simulator(tmp_path: Path) -> None:
    pages = [GOOD, WRONG, GOOD[:2], []]
    two = f"execution.devices=[sim:{WORLD}, sim:{WORLD}]"
    threads = _make_run(tmp_path / "threads", pages)
    processes = _make_run(tmp_path / "processes", pages)
    execute_run(threads, _config(two, "execution.executor=threads"))
    execute_run(processes, _config(two, "execution.executor=processes"))
    got, want = _rows(processes), _rows(threads)
    assert len(want) == len(pages) and got == want
    assert want["http://site.test/p0"]["status"] == "executed" and want["http://site.test/p0"]["f4"] > 0
    # the worker processes wrote the same trajectories (timings aside)
    executed = [ExecutionResult.parse(row) for row in want.values() if row["trajectory"]]
    assert executed
    for row in executed:
        a, b = RunTrajectories(threads).data(row), RunTrajectories(processes).data(row)
        assert [s["action"] for s in a["steps"]] == [s["action"] for s in b["steps"]]
        assert a["final_xml"] == b["final_xml"]  # the same screen, stored under the same name


def test_the_workers_of_a_run_share_one_vector_cache_and_a_rerun_embeds_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import verirank_core.embed as embed

    pages = [GOOD, WRONG, TAP_SWITCH, GOOD[:2]] * 2
    first = _make_run(tmp_path / "first", pages)
    execute_run(first, _config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]", "execution.executor=processes"))
    stored = first / "cache" / "vectors.sqlite"
    assert stored.is_file()
    # the labels the workers embedded are there for the next run that names the file
    monkeypatch.setattr(embed, "_default", None)  # a new process: nothing in memory
    again = _make_run(tmp_path / "again", pages)
    execute_run(again, _config(f"execution.devices=[sim:{WORLD}]", f"execution.vector_cache={stored}"))
    encoder = embed.default_encoder()
    assert encoder.disk_hits > 0 and encoder.misses == 0
    assert encoder.disk is None  # the stage let go of the file
    # and the cache changes no verdict
    monkeypatch.setattr(embed, "_default", None)
    off = _make_run(tmp_path / "off", pages)
    execute_run(off, _config(f"execution.devices=[sim:{WORLD}]", "execution.vector_cache=null"))
    assert not (off / "cache").exists()
    assert _rows(again) == _rows(off) == _rows(first)


@pytest.mark.slow
def test_threads_and_ray_give_the_same_records_over_adb(adb_host, serve, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")  # an optional extra, not our code
    sim = serve()
    pages = [GOOD, WRONG, TAP_SWITCH, []]
    threads = _make_run(tmp_path / "threads", pages)
    execute_run(threads, _adb_config(adb_host, [sim.address], "execution.executor=threads"))
    _fresh(adb_host, sim)
    on_ray = _make_run(tmp_path / "ray", pages)
    try:
        execute_run(on_ray, _adb_config(adb_host, [sim.address], "execution.executor=ray"))
    finally:
        ray.shutdown()
    got, want = _rows(on_ray), _rows(threads)
    assert got == want
    assert all(r["device"] == f"adb:{sim.address}" for r in want.values() if r["status"] == "executed")
    assert want["http://site.test/p0"]["f4"] == 1.0


# -- adb end to end ----------------------------------------------------------------

def test_execute_run_over_adb_devices(adb_host, serve, tmp_path: Path) -> None:
    sims = [serve(), serve()]
    run = _make_run(tmp_path / "run", [GOOD, WRONG, GOOD, []])
    counts = execute_run(run, _adb_config(adb_host, [s.address for s in sims]))
    rows = _rows(run)
    assert counts["executed"] == 3 and counts["skipped"] == 1
    assert rows["http://site.test/p0"]["f4"] == 1.0 and rows["http://site.test/p2"]["f4"] == 1.0
    assert rows["http://site.test/p1"]["f4"] < 1.0
    assert {r["device"] for r in rows.values() if r["device"]} <= {f"adb:{s.address}" for s in sims}
    # the same pages on the in-process simulator give the same verdicts
    local = _make_run(tmp_path / "local", [GOOD, WRONG, GOOD, []])
    execute_run(local, _config(f"execution.devices=[sim:{WORLD}]"))
    for url, row in _rows(local).items():
        assert (rows[url]["status"], rows[url]["f4"], rows[url]["stop_reason"]) == \
            (row["status"], row["f4"], row["stop_reason"])


def _run_in_background(run: Path, config) -> tuple[threading.Thread, list]:
    outcome: list = []

    def target() -> None:
        try:
            outcome.append(execute_run(run, config))
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def _written(run: Path) -> list[dict]:
    path = run / "execution.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def test_a_device_killed_mid_run_hands_its_pages_to_the_other(adb_host, serve, tmp_path: Path) -> None:
    doomed, survivor = serve(), serve()
    pages = [GOOD, WRONG] * 4 + [[]]
    run = _make_run(tmp_path / "run", pages)
    config = _adb_config(adb_host, [doomed.address, survivor.address], "execution.max_attempts=3")
    thread, outcome = _run_in_background(run, config)
    # the doomed phone has finished a page and is busy with the next one: pull the plug
    wait_until(lambda: any(r["device"] == f"adb:{doomed.address}" for r in _written(run)), 300,
               interval=0.02, what="a page finished on the first device")
    doomed.kill()
    thread.join(600)
    assert not thread.is_alive() and isinstance(outcome[0], dict), outcome
    rows = _rows(run)
    assert set(rows) == {f"http://site.test/p{i}" for i in range(len(pages))}
    executed = [r for r in rows.values() if r["status"] == "executed"]
    assert len(executed) == len(pages) - 1  # the survivor ran everything the doomed one could not
    moved = [r for r in executed if r["attempts"] > 1]
    assert moved and all(r["device"] == f"adb:{survivor.address}" for r in moved)
    assert outcome[0]["executed"] == len(pages) - 1


def test_when_the_only_device_dies_the_rest_are_device_failed(adb_host, serve, tmp_path: Path) -> None:
    sim = serve()
    pages = [GOOD, WRONG, GOOD, WRONG, []]
    run = _make_run(tmp_path / "run", pages)
    thread, outcome = _run_in_background(run, _adb_config(adb_host, [sim.address], "execution.max_attempts=2"))
    wait_until(lambda: any(r["status"] == "executed" for r in _written(run)), 300, interval=0.02,
               what="a first page")
    sim.kill()
    thread.join(600)
    assert not thread.is_alive() and isinstance(outcome[0], dict), outcome
    rows = _rows(run)
    assert set(rows) == {f"http://site.test/p{i}" for i in range(len(pages))}  # nothing lost
    failed = [r for r in rows.values() if r["status"] == "device_failed"]
    assert failed, "the pages after the kill have a status of their own"
    for row in failed:
        assert row["attempts"] == 2 and sim.address in row["reason"]


# -- settings isolation ------------------------------------------------------------

def test_settings_over_the_wire(adb_host, serve) -> None:
    sim = serve()

    def shell(command: str) -> str:
        done = adb_host.run("-s", sim.address, "shell", command)
        assert done.returncode == 0, done
        return done.stdout.decode()

    assert "dark_theme=0" in shell("settings list system").splitlines()
    shell("settings put system dark_theme 1")
    assert shell("settings get system dark_theme") == "1\n"
    shell("settings put global verirank_test 'two words'")
    assert "verirank_test=two words" in shell("settings list global").splitlines()
    assert shell("settings delete global verirank_test") == "Deleted 1 rows\n"
    assert shell("settings get global verirank_test") == "null\n"
    assert adb_host.run("-s", sim.address, "shell", "settings put system dark_theme maybe").returncode == 1


def test_page_b_gets_the_same_verdict_whether_or_not_page_a_ran_first(adb_host, serve, tmp_path: Path) -> None:
    sim = serve()

    def dark_theme() -> bytes:
        return adb_host.run("-s", sim.address, "shell", "settings get system dark_theme").stdout

    def verdict_of_b(name: str, pages: list[list[str]], isolation: str) -> tuple:
        _fresh(adb_host, sim)
        run = _make_run(tmp_path / name, pages)
        execute_run(run, _adb_config(adb_host, [sim.address], f"execution.isolation={isolation}"))
        row = _rows(run)[f"http://site.test/p{len(pages) - 1}"]
        return row["status"], row["f4"], row["stop_reason"]

    alone = verdict_of_b("alone", [TAP_SWITCH], "auto")
    assert alone[0] == "executed"
    # page A turns dark theme on; isolation (on by default for adb) undoes it before page B
    assert verdict_of_b("after-a", [GOOD, TAP_SWITCH], "auto") == alone
    assert dark_theme() == b"0\n"  # and the phone is left as the run found it
    # without isolation page B finds dark theme on and turns it off: its verdict depends on A
    assert verdict_of_b("after-a-no-isolation", [GOOD, TAP_SWITCH], "off") != alone


class _FailsOnceDarkThemeIsOn:
    """A served phone that fails one ``uiautomator dump`` once a page has turned dark theme on (a busy
    phone), and with ``refuse_settings`` also refuses the next ``settings put`` after that (a provider
    that is not answering yet)."""

    @staticmethod
    def open(refuse_settings: bool = False, fail_dumps: int = 1):
        from phonesim.device import SimDevice
        from verirank_core.errors import DeviceError

        class Phone(SimDevice):
            dumps_to_fail, puts_to_refuse = fail_dumps, int(refuse_settings)

            def dump_xml(self) -> str:
                if self.dumps_to_fail and self.settings_list("system").get("dark_theme") == "1":
                    self.dumps_to_fail -= 1
                    raise DeviceError("ERROR: could not get idle state.")
                return super().dump_xml()

            def settings_put(self, namespace: str, key: str, value: str) -> None:
                if self.puts_to_refuse and not self.dumps_to_fail:
                    self.puts_to_refuse -= 1
                    raise DeviceError("settings provider not answering")
                super().settings_put(namespace, key, value)

        return Phone.open(WORLD)


@pytest.fixture
def served_in_process(adb_host):
    from phonesim.adb_server import AdbDeviceServer

    opened = []

    def serve(device):
        server = AdbDeviceServer(device)
        opened.append(server)
        adb_host.connect(server.address)
        return server

    yield serve
    for server in opened:
        adb_host.disconnect(server.address)
        server.close()


def _verdict(row: dict) -> tuple:
    return row["status"], row["f4"], row["stop_reason"]


def _tap_switch_verdicts(adb_host, served_in_process, tmp_path: Path) -> tuple[tuple, tuple]:
    """TAP_SWITCH's verdict on a phone as it starts, and on one where dark theme is already on."""
    verdicts = []
    for dark in ("0", "1"):
        phone = _FailsOnceDarkThemeIsOn.open(fail_dumps=0)
        phone.settings_put("system", "dark_theme", dark)
        server = served_in_process(phone)
        run = _make_run(tmp_path / f"dark-{dark}", [TAP_SWITCH])
        execute_run(run, _adb_config(adb_host, [server.address]))
        verdicts.append(_verdict(_rows(run)["http://site.test/p0"]))
    clean, changed = verdicts
    assert clean != changed, "the page's verdict must show whether the phone was left changed"
    from execution.adb_device import forget_screens

    # these phones made their screens known to every phone of the build (a known screen is not waited
    # for); the phone that fails a dump must really be asked for it
    forget_screens()
    return clean, changed


def test_settings_are_restored_after_a_device_error_as_after_a_normal_page(
        adb_host, served_in_process, tmp_path: Path) -> None:
    clean, _ = _tap_switch_verdicts(adb_host, served_in_process, tmp_path)
    phone = _FailsOnceDarkThemeIsOn.open()
    server = served_in_process(phone)
    run = _make_run(tmp_path / "run", [TAP_SWITCH])
    execute_run(run, _adb_config(adb_host, [server.address], "execution.adb.dump_retries=0",
                                 "execution.max_attempts=2"))
    row = _rows(run)["http://site.test/p0"]
    # the first attempt turned dark theme on and lost the phone; its settings were put back, so the
    # second attempt found the phone as the first did
    assert phone.dumps_to_fail == 0 and row["attempts"] == 2
    assert _verdict(row) == clean and row["settings_unrestored"] == []
    assert phone.settings_list("system")["dark_theme"] == "0"


def test_settings_a_failed_page_left_changed_are_named_in_its_row_and_restored_before_the_next_page(
        adb_host, served_in_process, tmp_path: Path) -> None:
    clean, _ = _tap_switch_verdicts(adb_host, served_in_process, tmp_path)
    phone = _FailsOnceDarkThemeIsOn.open(refuse_settings=True)
    server = served_in_process(phone)
    run = _make_run(tmp_path / "run", [TAP_SWITCH, TAP_SWITCH])
    execute_run(run, _adb_config(adb_host, [server.address], "execution.adb.dump_retries=0",
                                 "execution.max_attempts=1"))
    rows = _rows(run)
    failed, after = rows["http://site.test/p0"], rows["http://site.test/p1"]
    assert failed["status"] == "device_failed"
    assert "settings not restored: system/dark_theme" in failed["reason"]
    # the slot put them back when it opened the phone again, before the next page
    assert phone.puts_to_refuse == 0 and _verdict(after) == clean
    assert phone.settings_list("system")["dark_theme"] == "0"


def test_a_killed_worker_process_loses_no_page(tmp_path: Path) -> None:
    import multiprocessing
    import os
    import signal

    pages = [GOOD, WRONG] * 5
    run = _make_run(tmp_path / "run", pages)
    config = _config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]", "execution.executor=processes")
    thread, outcome = _run_in_background(run, config)

    def workers() -> list:
        return [p for p in multiprocessing.active_children() if p.name == "verirank-device" and p.is_alive()]

    wait_until(lambda: len(_written(run)) >= 1 and len(workers()) == 2, 300, interval=0.02,
               what="both worker processes at work")
    victim = workers()[0]
    os.kill(victim.pid, signal.SIGKILL)  # the OOM killer, say
    thread.join(600)
    assert not thread.is_alive() and isinstance(outcome[0], dict), outcome
    rows = _rows(run)
    assert set(rows) == {f"http://site.test/p{i}" for i in range(len(pages))}
    assert all(r["status"] == "executed" for r in rows.values())
    # the same pages on threads get the same verdicts: a retried page starts from scratch
    again = _make_run(tmp_path / "threads", pages)
    execute_run(again, _config(f"execution.devices=[sim:{WORLD}]"))
    assert {u: (r["f4"], r["stop_reason"]) for u, r in rows.items()} == \
        {u: (r["f4"], r["stop_reason"]) for u, r in _rows(again).items()}


def test_a_killed_worker_process_spends_an_attempt_only_on_the_page_it_was_running(tmp_path: Path) -> None:
    """A worker holds a second page in its pipe; when it is killed that page never ran, so with one
    attempt per page only the page in progress is device_failed and the other is run elsewhere."""
    import multiprocessing
    import os
    import signal

    pages = [GOOD, WRONG] * 100  # seconds of work: the kill lands mid-run even on a slow machine
    run = _make_run(tmp_path / "run", pages)
    config = _config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]", "execution.executor=processes",
                     "execution.max_attempts=1")
    thread, outcome = _run_in_background(run, config)

    def workers() -> list:
        return [p for p in multiprocessing.active_children() if p.name == "verirank-device" and p.is_alive()]

    wait_until(lambda: len(_written(run)) >= 2 and len(workers()) == 2, 300, interval=0.02,
               what="both worker processes at work")
    os.kill(workers()[0].pid, signal.SIGKILL)
    thread.join(600)
    assert not thread.is_alive() and isinstance(outcome[0], dict), outcome
    rows = _rows(run)
    assert set(rows) == {f"http://site.test/p{i}" for i in range(len(pages))}
    failed = [r for r in rows.values() if r["status"] == "device_failed"]
    assert len(failed) == 1, [(r["url"], r["status"], r["reason"]) for r in failed]
    assert "worker process died" in failed[0]["reason"]


def test_warm_up_starts_the_fork_server_for_several_simulators(tmp_path: Path) -> None:
    """``ExecuteStage.warm_up`` (called before stage 1) starts the fork server, so that its imports
    overlap stages 1; and the demo's execute stage asks for it too."""
    import multiprocessing.forkserver as forkserver
    import os

    from execution.stage import ExecuteStage
    from verirank.demo import sim_execution

    ExecuteStage().warm_up(_config(f"execution.devices=[sim:{WORLD}, sim:{WORLD}]"))
    pid = forkserver._forkserver._forkserver_pid
    assert pid is not None
    os.kill(pid, 0)  # alive
    assert choose_executor(sim_execution(_config(), "any", devices=2)) == "processes"
    assert choose_executor(sim_execution(_config(), "any", devices=1)) == "threads"


def test_the_demo_starts_no_fork_server_for_a_benchmark_too_small_for_processes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import multiprocessing.forkserver as forkserver

    from verirank.demo import SimExecuteStage, sim_execution

    started: list[bool] = []
    monkeypatch.setattr(forkserver, "ensure_running", lambda: started.append(True))
    for rows, want in ((3, []), (250, [True])):
        data = tmp_path / f"bench-{rows}"
        data.mkdir()
        (data / "serp.jsonl").write_text("".join(
            json.dumps({"qid": "q1", "rank": i + 1, "url": f"http://x.test/{i}"}) + "\n" for i in range(rows)))
        started.clear()
        SimExecuteStage(data).warm_up(sim_execution(_config(), "any", devices=2))
        assert started == want, rows
