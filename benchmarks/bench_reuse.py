"""What a second run of the same stage-2 job costs when its verdicts are reused.

    .venv/bin/python -m benchmarks.bench_reuse [--quick] [--devices 2]

The job is the 300-page one of ``bench_pipeline`` (HowToBench from the real
OnePlus Settings tasks on the imported world, 6 queries x 50 pages;
``--quick``: 2 x 30). Stage 2 runs on fresh copies of its extraction:

1. **off**: no verdict cache (``execution.verdict_cache: null``), the cost before;
2. **first**: an empty verdict cache: every page runs, and its verdict is stored;
3. **second**: a new run directory, the same cache: every unchanged page is
   taken from it and no device is opened;
4. **second, new process**: ``verirank execute`` of a new copy in a fresh
   process, as a weekly rerun starts (Python, imports and config included).

Reports each wall time, the second/first ratio, the share of pages reused, how
much the store adds to a first run, the cache's size per page, and whether the
second run's rows equal the first's apart from ``reused``, ``verified_at``,
``elapsed_s`` and ``attempts``. Writes benchmarks/results/reuse.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_pipeline import WORLD, _copy_job, build_job, run_job
from execution.verdict_cache import VERDICT_CACHE_ENV

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "reuse.json"
#: the fields a reused row may differ in from the row that was run
RUN_ONLY = {"reused", "verified_at", "elapsed_s", "attempts"}
#: a second run of an unchanged job should cost at most this fraction of the first
TARGETS = {"second_over_first": 0.1, "reused_share": 1.0}


def _stage2(job: Path, out: Path, devices: int, cache: Path | None) -> dict[str, Any]:
    from benchmarks.caches import fresh_caches
    from execution.stage import execute_run
    from verirank_core.config import load_config

    _copy_job(job, out)
    # benchmarks turn the per-user cache off through the environment (benchmarks/__init__.py), which
    # wins over the config: name this run's file there
    os.environ[VERDICT_CACHE_ENV] = str(cache) if cache else "off"
    config = load_config(overrides=[{"execution": {
        "devices": [f"sim:{WORLD}"] * devices, "route_by_world": True,
        "verdict_cache": str(cache) if cache else None}}])
    fresh_caches()
    started = time.perf_counter()
    counts = execute_run(out, config)
    return {"wall_s": round(time.perf_counter() - started, 3), "counts": counts}


def _second_in_new_process(job: Path, out: Path, devices: int, cache: Path) -> dict[str, Any]:
    _copy_job(job, out)
    env = dict(os.environ, VERIRANK_NO_PROGRESS="1", **{VERDICT_CACHE_ENV: str(cache)})
    cmd = [str(Path(sys.executable).parent / "verirank"), "execute", str(out),
           "--devices", ",".join([f"sim:{WORLD}"] * devices)]
    log = out / "cli.log"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    # output to a file, not a pipe: the command's fork server (started by the stage's warm-up) would
    # hold a pipe open until its imports are done, long after the command has returned
    with open(log, "w") as fh:
        code = subprocess.call(cmd, cwd=ROOT, env=env, stdout=fh, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    output = log.read_text("utf-8", errors="replace")
    if code:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{output[-2000:]}")
    # CPU time too: on a shared machine the wall time of a short process swings with the load
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    line = next((x for x in output.splitlines() if x.startswith("execute:")), "")
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "output": line}


def _same_rows(a: Path, b: Path) -> bool:
    from verirank_core.execution_records import ExecutionResult
    from verirank_core.store import read_jsonl

    rows = [{r.key(): r.model_dump(mode="json", exclude=RUN_ONLY) for r in read_jsonl(run / "execution.jsonl",
                                                                                    ExecutionResult)}
            for run in (a, b)]
    return rows[0] == rows[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 queries x 30 pages")
    parser.add_argument("--devices", type=int, default=2, help="simulated devices (default 2)")
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    args = parser.parse_args(argv)
    queries, per_query = (2, 30) if args.quick else (6, 50)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="bench-reuse-"))
    if args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
    cache = tmp / "verdicts.sqlite"
    record: dict[str, Any] = {"benchmark": "bench_reuse", "quick": args.quick, "devices": args.devices,
                              "targets": TARGETS}
    try:
        print(f"job: HowToBench on {WORLD}, {queries} x {per_query} pages ...", flush=True)
        data = build_job(tmp, per_query)
        run_job(data, tmp / "job", queries, per_query, "auto")  # stages 1 and 2 once: loads the model too
        print("stage 2 without a verdict cache ...", flush=True)
        record["off"] = _stage2(tmp / "job", tmp / "off", args.devices, None)
        print("stage 2, first run (empty verdict cache) ...", flush=True)
        record["first"] = _stage2(tmp / "job", tmp / "first", args.devices, cache)
        print("stage 2, second run ...", flush=True)
        record["second"] = _stage2(tmp / "job", tmp / "second", args.devices, cache)
        print("stage 2, second run in a new process (verirank execute) ...", flush=True)
        record["second_new_process"] = _second_in_new_process(tmp / "job", tmp / "cli", args.devices, cache)
        executed = record["first"]["counts"].get("executed", 0)
        record["pages"] = sum(record["first"]["counts"].get(k, 0) for k in ("executed", "skipped", "device_failed"))
        record["ratios"] = {
            "second_over_first": round(record["second"]["wall_s"] / record["first"]["wall_s"], 4),
            "second_new_process_over_first": round(
                record["second_new_process"]["wall_s"] / record["first"]["wall_s"], 4),
            "first_over_off": round(record["first"]["wall_s"] / record["off"]["wall_s"], 3),
            "reused_share": round(record["second"]["counts"].get("reused", 0) / max(1, executed), 4),
        }
        record["same_rows"] = _same_rows(tmp / "first", tmp / "second")
        record["cache_kb_per_page"] = round(cache.stat().st_size / 1024 / max(1, executed), 1)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    record["machine"] = {"cpus": os.cpu_count(), "load": round(os.getloadavg()[0], 2),
                         "python": platform.python_version()}
    record["met"] = {"second_over_first": record["ratios"]["second_over_first"] <= TARGETS["second_over_first"],
                     "reused_share": record["ratios"]["reused_share"] >= TARGETS["reused_share"],
                     "same_rows": record["same_rows"]}
    _print(record)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    print(f"\nwrote {RESULTS}")
    return 0


def _print(r: dict[str, Any]) -> None:
    print(f"\nstage 2 of a {r['pages']}-page job on {r['devices']} simulated device(s)")
    print(f"{'run':<34}{'wall s':>10}  counts")
    for name in ("off", "first", "second"):
        print(f"{name:<34}{r[name]['wall_s']:>10.3f}  {r[name]['counts']}")
    cli = r["second_new_process"]
    print(f"{'second, new process (CLI)':<34}{cli['wall_s']:>10.3f}  {cli['output']} (CPU {cli['cpu_s']} s)")
    for key, value in r["ratios"].items():
        print(f"{key:<34}{value:>10}")
    print(f"{'rows equal (but run-only fields)':<34}{str(r['same_rows']):>10}")
    print(f"{'cache kB per page':<34}{r['cache_kb_per_page']:>10}")
    print(f"targets met: {r['met']}")


if __name__ == "__main__":
    sys.exit(main())
