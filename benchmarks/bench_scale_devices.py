"""Stage 2 on 1, 2, 4 and 8 phones: served simulators with phone-like latency, over adb.

    .venv/bin/python -m benchmarks.bench_scale_devices [--quick] [--pages N] [--devices 1,2,4,8]
                                                      [--latency SPEC] [--latency-scale F] [--skip-fresh]

A real phone is latency-bound (a ``uiautomator dump`` takes about a second),
so a farm of phones is limited by the scheduler and by adb, not by this
machine's two cores. Here every device is ``verirank sim serve WORLD --latency
SPEC`` in its own process, reached through a private adb server as
``adb:127.0.0.1:PORT``, exactly as a phone on Wi-Fi debugging is. The same
job (the same how-to pages) runs on 1, 2, 4 and 8 of them, and the report
gives the speed-up over one device (goals: >= 7x on 8, >= 1.9x on 2) and the
rows, which must be the same apart from timings and which device ran them.

It also measures the start-up: the first page's latency (from the call to the
first row recorded) and how much of it came before the page began (``ready``:
that latency minus the page's own ``elapsed_s``), in this process (warm: a
second stage of the same process) and in a new ``verirank execute`` process
on a machine where verirank ran before (goal: ready <= 1 s).

``--quick`` runs 16 pages with the latency divided by 4. Results:
benchmarks/results/scale_devices.json (docs/throughput.md quotes them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_adb import _start_adb
from benchmarks.bench_executors import _Arrivals, _make_run
from benchmarks.caches import fresh_caches
from phonesim.latency import Latency

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "scale_devices.json"
WORLD = "android13-settings"
GOALS = {2: 1.9, 8: 7.0}
READY_GOAL_S = 1.0
#: fields that differ with the device a page ran on, or its timing
UNSTABLE = {"elapsed_s", "attempts", "device", "device_serial", "verified_at", "reused"}


def _serve(count: int, latency: Latency, env: dict[str, str]) -> tuple[list[subprocess.Popen], list[int]]:
    """``count`` × ``verirank sim serve WORLD --latency ...``, each on a free port."""
    procs = [subprocess.Popen([sys.executable, "-m", "verirank", "sim", "serve", WORLD, "--port", "0",
                               "--latency", latency.describe()],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
             for _ in range(count)]
    ports = []
    for proc in procs:
        line = proc.stdout.readline() if proc.stdout else ""
        found = re.search(r" on 127\.0\.0\.1:(\d+)", line)
        if not found:
            for p in procs:
                p.kill()
            raise SystemExit(f"`verirank sim serve` did not start: {line!r}")
        ports.append(int(found.group(1)))
    return procs, ports


def _cpu_s(pids: list[int]) -> float:
    """CPU seconds (user + system) the processes ``pids`` used so far (Linux /proc)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime
    return total / os.sysconf("SC_CLK_TCK")


#: the machine-wide vector cache of the runs (``execution.vector_cache``); set in :func:`main`
VECTORS = {"path": "cache/vectors.sqlite"}


def _sets(ports: list[int], adb_port: int) -> list[str]:
    devices = ", ".join(f"adb:127.0.0.1:{p}" for p in ports)
    # every page runs (no verdict is reused); the label vectors are those of the machine (the default
    # file, here one of the benchmark's own) or, with --per-run-vectors, each run's own
    return [f"execution.devices=[{devices}]", f"execution.adb.adb_port={adb_port}",
            "execution.verdict_cache=null", f"execution.vector_cache={VECTORS['path']}"]


def _first_row(run: Path) -> dict[str, Any]:
    with open(run / "execution.jsonl", encoding="utf-8") as fh:
        return json.loads(fh.readline())


def _timed(tmp: Path, name: str, n_pages: int, sets: list[str]) -> dict[str, Any]:
    from execution.stage import execute_run
    from verirank_core.config import load_config, parse_override
    from verirank_core.execution_records import ExecutionResult
    from verirank_core.store import read_jsonl

    from execution.adb_device import forget_screens

    run = _make_run(tmp / name, n_pages)
    config = load_config(overrides=[parse_override(s) for s in sets])
    fresh_caches()
    forget_screens()  # every run learns the screens anew, as a new process does (the vectors stay: the machine's)
    bars: list[_Arrivals] = []
    cpu = time.process_time()
    started = time.perf_counter()
    execute_run(run, config, progress=lambda **kw: bars.append(_Arrivals()) or bars[-1])
    wall = time.perf_counter() - started
    cpu = time.process_time() - cpu
    results = read_jsonl(run / "execution.jsonl", ExecutionResult)
    rows = {r.url: {k: v for k, v in r.to_json_dict().items() if k not in UNSTABLE} for r in results}
    first = bars[0].times[0] - started
    first_own = float(_first_row(run).get("elapsed_s") or 0.0)
    return {"wall_s": wall, "cpu_s": cpu, "rows": rows, "first_page_s": first, "ready_s": first - first_own,
            "page_s": statistics.fmean(r.elapsed_s or 0.0 for r in results),
            "statuses": sorted({r.status.value for r in results})}


def _fresh(tmp: Path, name: str, ports: list[int], adb_port: int, env: dict[str, str]) -> dict[str, float]:
    """``verirank execute`` on 1 page in a new interpreter: seconds from the command's start to its first
    row, and of those, before the page began (its row's ``elapsed_s`` aside)."""
    run = _make_run(tmp / name, 1)
    cmd = [sys.executable, "-m", "verirank", "execute", str(run), "--devices",
           ",".join(f"adb:127.0.0.1:{p}" for p in ports)]
    for s in _sets(ports, adb_port)[1:]:
        cmd += ["--set", s]
    started = time.time()
    subprocess.run(cmd, check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.time() - started
    first = (run / "execution.jsonl").stat().st_mtime - started  # the row is its file's one write
    own = float(_first_row(run).get("elapsed_s") or 0.0)
    return {"command_s": round(wall, 2), "first_page_s": round(first, 2), "ready_s": round(first - own, 2),
            "page_s": round(own, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="16 pages, latency / 4")
    parser.add_argument("--pages", type=int, default=None, help="pages per run (default 32; --quick 16)")
    parser.add_argument("--devices", default="1,2,4,8", help="device counts to run (default 1,2,4,8)")
    parser.add_argument("--latency", default="phone", help="the served devices' latency spec (default: phone, "
                                                           f"{Latency.parse('phone').describe()})")
    parser.add_argument("--latency-scale", type=float, default=None, help="multiply every delay (--quick: 0.25)")
    parser.add_argument("--skip-fresh", action="store_true", help="leave out the new-process start-up")
    parser.add_argument("--per-run-vectors", action="store_true",
                        help="each run embeds its labels again (the default before the machine-wide vector cache)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    n_pages = args.pages or (16 if args.quick else 32)
    counts = sorted({int(c) for c in args.devices.split(",") if c.strip()})
    latency = Latency.parse(args.latency).scaled(args.latency_scale or (0.25 if args.quick else 1.0))
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT), "VERIRANK_NO_PROGRESS": "1"}
    record: dict[str, Any] = {"pages": n_pages, "latency": latency.describe(), "world": WORLD,
                              "cpus": os.cpu_count(), "load_before": round(os.getloadavg()[0], 2), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp_name:
        tmp = Path(tmp_name)
        VECTORS["path"] = "cache/vectors.sqlite" if args.per_run_vectors else str(tmp / "machine-vectors.sqlite")
        record["vectors"] = "per run" if args.per_run_vectors else "machine-wide"
        adb, adb_port = _start_adb(tmp)
        env.update(ANDROID_USER_HOME=str(tmp), ANDROID_ADB_SERVER_PORT=str(adb_port))
        servers, ports = _serve(max(counts), latency, env)
        try:
            # warm-up: this process loads the model and connects every device once, out of the clock
            _timed(tmp, "warm-up", len(ports), _sets(ports, adb_port))
            base_rows = None
            for k in counts:
                others = [adb.pid] + [proc.pid for proc in servers[:k]]
                before = _cpu_s(others)
                got = _timed(tmp, f"devices-{k}", n_pages, _sets(ports[:k], adb_port))
                # the served phones and the adb server; with this process, whether the cores were the limit
                got["others_cpu_s"] = _cpu_s(others) - before
                got["cpu_share"] = (got["cpu_s"] + got["others_cpu_s"]) / (got["wall_s"] * (os.cpu_count() or 1))
                got["same_rows"] = base_rows is None or got["rows"] == base_rows
                base_rows = base_rows or got["rows"]
                got.pop("rows")
                record["runs"][str(k)] = {key: round(v, 3) if isinstance(v, float) else v for key, v in got.items()}
                print(f"  {k} device(s): {got['wall_s']:7.1f} s, first page {got['first_page_s']:.2f} s "
                      f"(ready {got['ready_s']:.2f} s), {got['page_s']:.1f} s a page, "
                      f"CPU: this process {got['cpu_s']:.1f} s, phones and adb {got['others_cpu_s']:.1f} s "
                      f"({got['cpu_share']:.0%} of the cores)", flush=True)
            if not args.skip_fresh:
                # a new process on a machine where verirank ran before: the warm-up above
                record["fresh_process"] = [_fresh(tmp, f"fresh-{i}", ports[:1], adb_port, env) for i in range(2)]
        finally:
            for proc in servers:
                proc.kill()
            for proc in servers:
                proc.wait(10)
            adb.terminate()
            adb.wait(10)
    record["load_after"] = round(os.getloadavg()[0], 2)
    one = record["runs"].get("1", {}).get("wall_s")
    print(f"\n{n_pages} pages on {WORLD} served with latency {latency.describe()}, {os.cpu_count()} CPUs, "
          f"load {record['load_before']} -> {record['load_after']}")
    met = True
    for k, run in record["runs"].items():
        run["speedup"] = round(one / run["wall_s"], 2) if one else None
        goal = GOALS.get(int(k))
        if goal is not None and run["speedup"] is not None:
            run["goal"] = goal
            met &= run["speedup"] >= goal
        print(f"  {k:>2} device(s) {run['wall_s']:7.1f} s  x{run['speedup']:.2f}"
              + (f" (goal >= {goal})" if goal else "")
              + f"  first page {run['first_page_s']:.2f} s, ready {run['ready_s']:.2f} s"
              + ("" if run["same_rows"] else "  ROWS DIFFER"))
    for fresh in record.get("fresh_process", []):
        print(f"  new `verirank execute` process, 1 page: first row at {fresh['first_page_s']:.2f} s, "
              f"ready {fresh['ready_s']:.2f} s (goal <= {READY_GOAL_S}), the page {fresh['page_s']:.2f} s")
    same = all(run["same_rows"] for run in record["runs"].values())
    record["met"] = met and same
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
