"""Stage 2 throughput by executor: 1 simulated device vs 2 on threads vs 2 in processes.

    .venv/bin/python -m benchmarks.bench_executors [--quick]

Runs the same job (how-to pages on the android13-settings world, with
``save_screens`` on as in a default run) through ``execute_run`` three ways in
one process and one run, and reports pages per second and the speed-up of each
two-device executor over one device. Wall time includes starting the worker
processes (each loads its own models; this process is warmed up first). Target (issue 13): 2 devices in
processes give >= 1.8x the pages of 1 device on a 2-core machine. The records
of the three runs must be the same apart from timings; this is checked here too.
Writes benchmarks/results/bench_executors.json.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from verirank_core.execution_records import ExecutionResult
from execution.runner import execute_run
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from verirank_core.config import load_config, parse_override
from verirank_core.store import read_jsonl, write_jsonl

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "bench_executors.json"
WORLD = "android13-settings"
TARGET_SPEEDUP = 1.8

PAGES = [
    ["Open Settings", "Tap Display", "Turn on Dark theme"],
    ["Open Settings", "Tap Wallpaper & style", "Tap Themes", "Select the Night theme"],
    ["Open Settings", "Tap Display", "Tap Screen timeout", "Select 5 minutes"],
    ["Open Settings", "Tap Battery", "Tap Battery Saver", "Turn on Use Battery Saver"],
    ["Open Settings", "Tap Connected devices", "Tap Connection preferences", "Tap Bluetooth", "Turn off Bluetooth"],
    ["Open Settings", "Tap Network & internet", "Tap Internet", "Turn off Wi-Fi"],
]


def _make_run(path: Path, n_pages: int) -> Path:
    path.mkdir(parents=True)
    write_jsonl(path / "queries.jsonl", [Query(qid="q1", query="how to change a setting", app="com.android.settings")])
    rows = []
    for i in range(n_pages):
        steps = PAGES[i % len(PAGES)]
        rows.append(Extraction(
            qid="q1", url=f"http://bench.test/{i}", rank=i + 1, query="how to change a setting",
            status=ExtractionStatus.OK,
            steps=[GroundedStep(index=k, text=t, xpath=f"/html/body/ol/li[{k + 1}]") for k, t in enumerate(steps)],
        ))
    write_jsonl(path / "extraction.jsonl", rows)
    return path


def _timed(tmp: Path, name: str, n_pages: int, *sets: str) -> tuple[float, dict]:
    run = _make_run(tmp / name, n_pages)
    config = load_config(overrides=[parse_override(s) for s in sets])
    started = time.perf_counter()
    execute_run(run, config)
    wall = time.perf_counter() - started
    rows = {r.url: {k: v for k, v in r.to_json_dict().items() if k != "elapsed_s"}
            for r in read_jsonl(run / "execution.jsonl", ExecutionResult)}
    return wall, rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="fewer pages")
    parser.add_argument("--pages", type=int, default=None,
                        help="pages per run (default 96; a stage that lasts seconds is dominated by "
                             "worker start-up, so use several hundred to see the steady-state speed-up)")
    args = parser.parse_args(argv)
    n_pages = args.pages or (24 if args.quick else 96)
    one, two = f"execution.devices=[sim:{WORLD}]", f"execution.devices=[sim:{WORLD}, sim:{WORLD}]"
    with tempfile.TemporaryDirectory(prefix="bench-executors-") as tmp:
        # load the models in this process first, so that thread runs do not pay it; a worker
        # process pays it once (about 10 s on the reference machine), and that is in its wall time
        _timed(Path(tmp), "warm-up", 2, one, "execution.executor=threads")
        runs = {
            "1 device (threads)": _timed(Path(tmp), "one", n_pages, one, "execution.executor=threads"),
            "2 devices, threads": _timed(Path(tmp), "threads", n_pages, two, "execution.executor=threads"),
            "2 devices, processes": _timed(Path(tmp), "processes", n_pages, two, "execution.executor=processes"),
            # the fork server (heavy imports) now runs: what a second stage in the same process pays
            "2 devices, processes, warm": _timed(Path(tmp), "processes2", n_pages, two,
                                                 "execution.executor=processes"),
        }
    base_wall, base_rows = runs["1 device (threads)"]
    same = all(rows == base_rows for _, rows in runs.values())
    table = {name: {"wall_s": round(wall, 2), "pages_per_s": round(n_pages / wall, 2),
                    "speedup_vs_1": round(base_wall / wall, 2)} for name, (wall, _) in runs.items()}
    print(f"{n_pages} pages on sim:{WORLD}, {os.cpu_count()} CPUs")
    for name, row in table.items():
        print(f"  {name:28s} {row['wall_s']:7.2f} s  {row['pages_per_s']:6.2f} pages/s  x{row['speedup_vs_1']:.2f}")
    speedup = table["2 devices, processes"]["speedup_vs_1"]
    print(f"records identical apart from timings: {same}")
    print(f"2 devices in processes vs 1: x{speedup:.2f} (target >= {TARGET_SPEEDUP})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"pages": n_pages, "cpus": os.cpu_count(), "runs": table,
                                   "records_identical": same, "target_speedup": TARGET_SPEEDUP,
                                   "met": speedup >= TARGET_SPEEDUP and same}, indent=2) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
