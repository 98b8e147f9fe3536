"""Per-step cost on the virtual ADB device: the simulator served over ADB, driven by AdbDevice.

    .venv/bin/python -m benchmarks.bench_adb [--quick] [--rounds N]

Serves ``sim:imported/oneplus-settings-android11`` with ``AdbDeviceServer``
(what ``verirank sim serve`` runs), starts a private adb server (adbutils'
bundled binary) and drives the device through adbutils like a phone. Reports

* the primitives: ``dump_xml``, ``screencap``, both in parallel, ``input tap``;
* ms per agent step (``run_episode`` with the heuristic predictor on a few
  OnePlus how-to pages), with ``skip_unchanged_dumps`` off and on, with
  screenshots every step and final only, and how many dumps were skipped.

Prints a table and writes benchmarks/results/adb.json (docs/adb.md quotes it).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "adb.json"
WORLD = "imported/oneplus-settings-android11"
SETTINGS = "com.android.settings"
#: how-to steps for the OnePlus world, written the way pages word them
PAGES = [
    ["Open Settings", "Tap Display", "Tap Dark mode", "Turn on Manual"],
    ["Open Settings", "Tap Display", "Turn on Auto-Rotate Screen"],
    ["Go to Settings > Display > Font size", "Select Large"],
    ["Open Settings", "Tap Battery", "Turn on Battery percentage"],
    ["Open Settings", "Tap Display", "Tap Screen timeout"],
]
ADB_ENV = {"ADB_MDNS": "0", "ADB_USB": "0", "ADB_EMU": "0", "ADB_LIBUSB": "0"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_adb(workdir: Path) -> tuple[subprocess.Popen, int]:
    import adbutils

    port = _free_port()
    env = dict(os.environ, ANDROID_USER_HOME=str(workdir), **ADB_ENV)
    env.pop("ANDROID_SERIAL", None)
    proc = subprocess.Popen([adbutils.adb_path(), "-P", str(port), "nodaemon", "server"], env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("the adb server did not start")


def _ms(fn, n: int) -> float:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return round(statistics.median(times), 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--rounds", type=int, default=3, help="passes over the pages per setting")
    args = parser.parse_args(argv)
    rounds = 1 if args.quick else args.rounds

    from execution.adb_device import AdbDevice
    from phonesim.adb_server import AdbDeviceServer
    from execution.agent import EpisodeConfig, run_episode
    from execution.predict import HeuristicPredictor
    from phonesim.device import SimDevice

    record: dict = {"benchmark": "bench_adb", "world": WORLD, "load_before": round(os.getloadavg()[0], 2)}
    with tempfile.TemporaryDirectory(prefix="bench-adb-") as tmp:
        proc, port = _start_adb(Path(tmp))
        server = AdbDeviceServer(SimDevice.open(WORLD))
        try:
            plain = AdbDevice(server.address, adb_port=port, start_server=False, timeout=30)
            n = 5 if args.quick else 15
            pool = ThreadPoolExecutor(2)
            record["primitives_ms"] = {
                "dump_xml": _ms(plain.dump_xml, n),
                "screencap": _ms(plain.screenshot_png, n),
                "dump_and_screencap_in_parallel": _ms(
                    lambda: [f.result() for f in (pool.submit(plain.dump_xml), pool.submit(plain.screenshot_png))], n),
                "input_tap": _ms(lambda: plain.tap(5, 5), n),
            }
            pool.shutdown()
            predictor = HeuristicPredictor()
            for page in PAGES:  # loads the model and embeds the labels once: settings then differ by device cost
                run_episode(page, predictor, plain, qid="warm", url="warm", app=SETTINGS)
            settings = {}
            for skip in (False, True):
                for shots in ("every_step", "final"):
                    device = AdbDevice(server.address, adb_port=port, start_server=False, timeout=30,
                                       skip_unchanged_dumps=skip)
                    steps, started = [], time.perf_counter()
                    for r in range(rounds):
                        for i, page in enumerate(PAGES):
                            out = Path(tmp) / f"t-{skip}-{shots}-{r}-{i}"
                            traj = run_episode(page, predictor, device,
                                               EpisodeConfig(screenshots=shots, screenshot_scale=0.5),
                                               qid="q", url=f"u{i}", app=SETTINGS, out_dir=out)
                            steps += traj.steps
                    wall = time.perf_counter() - started
                    device.close()
                    name = f"skip_unchanged_dumps={'on' if skip else 'off'}, screenshots={shots}"
                    settings[name] = {
                        "steps": len(steps), "wall_s": round(wall, 2),
                        "ms_per_step_wall": round(wall * 1000 / max(1, len(steps)), 1),
                        "ms_per_step": round(statistics.fmean(s.timings_ms["total"] for s in steps), 1),
                        "device_ms_per_step": round(statistics.fmean(s.timings_ms["device"] for s in steps), 1),
                        "dumps": device.dumps, "skipped_dumps": device.skipped_dumps,
                    }
            record["agent"] = settings
        finally:
            server.close()
            proc.terminate()
            proc.wait(10)
    record["load_after"] = round(os.getloadavg()[0], 2)

    print(f"virtual ADB device ({WORLD}), load average {record['load_before']} -> {record['load_after']}")
    for k, v in record["primitives_ms"].items():
        print(f"  {k:<34} {v:>8.1f} ms")
    print(f"\n{'setting':<58} {'steps':>6} {'ms/step':>8} {'device':>7} {'wall/step':>9} {'skipped':>8}")
    for name, s in record["agent"].items():
        print(f"{name:<58} {s['steps']:>6} {s['ms_per_step']:>8.1f} {s['device_ms_per_step']:>7.1f} "
              f"{s['ms_per_step_wall']:>9.1f} {s['skipped_dumps']:>3}/{s['dumps']:<4}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"\nwrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
