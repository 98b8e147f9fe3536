"""One verdict per page, whatever the transport.

The same pages run on the same world in process (``sim:WORLD``) and over ADB
(``verirank sim serve WORLD`` reached as ``adb:HOST:PORT`` through a private adb
server, the code path of a phone). A served simulator is the same world, so every
difference (stop reason, F4, any action of any step, the cards the agent and the
judge read) is a defect of the adb path or of the served simulator.

The pages are written in the styles of real help pages for other phones: names
this phone spells differently ("Connections", "Dark theme", "Screen lock"),
chained paths, grouping steps this phone lacks, steps outside the app (the shade, the Home
key, the app drawer), and pages that cannot work here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_served_sim import ServedSim

from verirank_core.config import load_config, parse_override
from verirank_core.execution_records import ExecutionResult, Trajectory
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.store import read_jsonl, write_jsonl
from verirank_core.trajectories import RunTrajectories
from execution.stage import execute_run

ONEPLUS = "imported/oneplus-settings-android11"
#: (query, steps) in the phrasing of help pages written for other phones
PAGES = [
    ("how to turn on wifi", ["Open Settings.", "Tap Connections.", "Tap Wi-Fi.", "Turn on Wi-Fi."]),
    ("how to turn on dark mode", ["Open the Settings app.", "Tap Display.", "Turn on Dark theme."]),
    ("how to set a screen lock", ["Go to Settings > Security > Screen lock.", "Choose Pattern."]),
    ("how to set a screen lock pin or pattern on android",
     ["Make sure the phone is charged.", "Open Settings, tap Security, and then tap Screen lock to pick a PIN "
      "or a pattern.", "Tap Encrypt phone."]),
    ("how to change the ringtone", ["Open Settings.", "Tap Sound.", "Tap Phone ringtone."]),
    ("how to turn on battery saver", ["Open Settings.", "Tap Battery.", "Tap Battery Saver.",
                                      "Tap Turn on now."]),
    ("how to change default apps", ["Open Settings.", "Tap Apps & notifications and then Advanced and then "
                                    "Default apps."]),
    ("how to reset network settings", ["Open Settings.", "Tap General management.", "Tap Reset.",
                                       "Tap Reset network settings."]),
    ("how to see the android version", ["Open Settings.", "Scroll down and tap About phone.",
                                        "Tap Android version."]),
    # steps outside the app: the shade pulled down from the top edge, the Home key and the app drawer
    ("how to turn on bluetooth", ["Swipe down from the top of the screen to open Quick Settings.",
                                  "Tap Bluetooth to turn it on."]),
    ("how to turn on dark mode", ["Press the Home key.", "Swipe up to open the app drawer and tap Settings.",
                                  "Tap Display.", "Turn on Dark theme."]),
    # a slider set by a tap near its low end (real-dev6's hF02-t02), off the control's centre
    ("how to change the ringtone volume on android", ["Go to Settings.", "Tap Sound.",
                                                      "Drag the Ring volume slider all the way to the left."]),
    # a skip taken back (the cards' "Buttons & gestures" for "Gestures" led nowhere), then the
    # reader's own pick made for the question (real-dev7's hG03-t03)
    ("how to turn on gesture navigation on android", ["Open your device's Settings app.",
                                                      "Tap System and then Gestures and then System navigation.",
                                                      "Choose your new navigation option."]),
    # sent back to Settings itself midway: Back presses to its home screen, where "More" is missing
    ("how to turn on wifi calling on android", ["In your phone's settings, turn on Wi-Fi.",
                                                "Go into your phone's Settings menu.",
                                                "Under Wireless and Networks, select More.", "Tap Wi-Fi Calling on."]),
]


def _make_run(path: Path) -> Path:
    path.mkdir(parents=True)
    write_jsonl(path / "queries.jsonl", [Query(qid=f"q{i}", query=query, app="com.android.settings")
                                         for i, (query, _) in enumerate(PAGES)])
    write_jsonl(path / "extraction.jsonl", [
        Extraction(qid=f"q{i}", url=f"http://site.test/p{i}", rank=1, query=query, status=ExtractionStatus.OK,
                   steps=[GroundedStep(index=j, text=t, xpath=f"/html/body/ol/li[{j + 1}]")
                          for j, t in enumerate(steps)])
        for i, (query, steps) in enumerate(PAGES)])
    return path


def _config(*sets: str):
    return load_config(overrides=[parse_override(s) for s in sets])


def _records(run: Path) -> dict[str, dict]:
    """Per page: what must not depend on the transport."""
    out = {}
    for row in read_jsonl(run / "execution.jsonl", ExecutionResult):
        traj = RunTrajectories(run).data(row)
        out[row.url] = {
            "status": row.status.value, "stop_reason": row.stop_reason, "deviations": row.deviation_kinds,
            "actions": [(s["step_index"], s["action"], s["ok"]) for s in traj["steps"]],
            "knowledge": traj.get("knowledge"), "f4": row.f4, "judge_detail": row.judge_detail,
            "device": (row.device_model, row.device_serial, row.os_version, row.app_version),
        }
    return out


@pytest.fixture(scope="module")
def both_ways(adb_host, tmp_path_factory):
    """The pages run in process and over adb: (run dir, records) for each."""
    tmp = tmp_path_factory.mktemp("parity")
    local = _make_run(tmp / "local")
    execute_run(local, _config(f"execution.devices=[sim:{ONEPLUS}]"))
    sim = ServedSim(ONEPLUS).start()
    try:
        adb_host.connect(sim.address)
        remote = _make_run(tmp / "adb")
        execute_run(remote, _config(f"execution.devices=[adb:{sim.address}]",
                                    f"execution.adb.adb_port={adb_host.port}", "execution.adb.timeout_s=20"))
        adb_host.disconnect(sim.address)
    finally:
        sim.stop()
    return (local, _records(local)), (remote, _records(remote))


def _differ(both_ways, fields: tuple[str, ...]) -> dict:
    (_, want), (_, got) = both_ways
    assert set(got) == set(want) == {f"http://site.test/p{i}" for i in range(len(PAGES))}
    return {url: ({k: want[url][k] for k in fields}, {k: got[url][k] for k in fields})
            for url in want if any(want[url][k] != got[url][k] for k in fields)}


def test_the_same_pages_take_the_same_actions_in_process_and_over_adb(both_ways):
    differ = _differ(both_ways, ("status", "stop_reason", "actions", "deviations", "knowledge"))
    assert not differ, differ
    (_, want), (remote, got) = both_ways
    # the pages are not trivial: some follow a rename the cards give, some fail
    assert any("knowledge" in v["deviations"] for v in want.values())
    assert any(v["stop_reason"] != "completed" for v in want.values())
    # the way back to Settings' home screen is the Back key, over adb as in process
    home = [a for v in got.values() for _, a, ok in v["actions"] if ok and "sends the reader to" in a["rationale"]]
    assert home and all(a["type"] == "back" for a in home)
    # the phone's own identity reached the records: the world's model and Android version
    assert {v["device"] for v in got.values()} == {("IN2013", "sim-oneplus-settings-android11", "11", "11")}
    # and reading a trajectory afterwards (as the judge does) finds the cards of that model, as for the world
    from execution.knowledge.cards import knowledge_for_trajectory

    for row in read_jsonl(remote / "execution.jsonl", ExecutionResult):
        traj = Trajectory.model_validate(RunTrajectories(remote).data(row))
        assert traj.world is None and knowledge_for_trajectory(traj) is not None
        assert knowledge_for_trajectory(traj).name == "oneplus-settings-android11"


def test_the_same_pages_get_the_same_verdicts_in_process_and_over_adb(both_ways):
    differ = _differ(both_ways, ("f4", "judge_detail"))
    assert not differ, differ
    (_, want), _ = both_ways
    assert any(v["f4"] == 1.0 for v in want.values()) and any(v["f4"] < 1.0 for v in want.values())
