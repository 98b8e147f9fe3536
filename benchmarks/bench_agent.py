"""The agent's own per-step overhead with the heuristic predictor on simulator worlds.

    .venv/bin/python -m benchmarks.bench_agent [--quick]

Runs a set of how-to pages through ``run_episode`` on ``SimDevice`` worlds
(no files written) and reads each StepRecord's timings: ``overhead`` is the
step's wall time minus the time spent in device calls and in models
(MiniLM embeddings). Target: mean overhead <= 5 ms per step. Also times
parsing + distillation of the real uiautomator dumps in ../shared.
Prints a table and writes benchmarks/results/bench_agent.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from execution.agent import run_episode
from execution.predict import HeuristicPredictor
from phonesim.device import SimDevice
from execution.uicontext import UIContext

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "bench_agent.json"
SHARED_DUMPS = ROOT.parent / "shared" / "fixtures" / "uiautomator"
TARGET_MS = 5.0

PAGES = [
    ("oneui5-settings", ["Open Settings", "Tap Display", "Turn on Dark mode"]),
    ("oneui5-settings", ["Open Settings > Display > Screen timeout", "Select 5 minutes"]),
    ("oneui5-settings", ["Open Settings", "Tap General management", "Tap Date and time", "Turn on Use 24-hour format"]),
    ("oneui5-settings", ["Open Settings", "Tap Connections", "Turn on Bluetooth"]),
    ("oneui5-settings", ["Open Settings", "Tap Display", "Tap Advanced", "Turn on Dark theme"]),  # gets stuck
    ("oneui5-settings", ["Open Settings", "Tap Notifications", "Tap Advanced settings", "Turn on Show battery percentage"]),
]


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def bench_episodes(repeats: int, use_embeddings: bool) -> dict:
    predictor = HeuristicPredictor(use_embeddings=use_embeddings)
    steps = []
    episodes = 0
    started = time.perf_counter()
    for _ in range(repeats):
        for world, instructions in PAGES:
            dev = SimDevice.open(world)
            traj = run_episode(instructions, predictor, dev, qid="bench", url="bench", app="com.android.settings")
            steps.extend(s.timings_ms for s in traj.steps)
            episodes += 1
    wall = time.perf_counter() - started
    overhead = [t["overhead"] for t in steps]
    return {
        "use_embeddings": use_embeddings,
        "episodes": episodes,
        "steps": len(steps),
        "overhead_ms_mean": round(statistics.fmean(overhead), 3),
        "overhead_ms_p50": round(_pct(overhead, 0.5), 3),
        "overhead_ms_p95": round(_pct(overhead, 0.95), 3),
        "device_ms_mean": round(statistics.fmean(t["device"] for t in steps), 3),
        "model_ms_mean": round(statistics.fmean(t["model"] for t in steps), 3),
        "total_ms_mean": round(statistics.fmean(t["total"] for t in steps), 3),
        "wall_s": round(wall, 3),
    }


def bench_distill(repeats: int) -> dict:
    files = sorted(SHARED_DUMPS.glob("*.xml"))
    if not files:
        return {"files": 0}
    xmls = [f.read_text("utf-8") for f in files]
    for xml in xmls:  # warm-up
        UIContext.from_xml(xml)
    times = []
    for _ in range(repeats):
        for xml in xmls:
            t = time.perf_counter()
            UIContext.from_xml(xml)
            times.append((time.perf_counter() - t) * 1000)
    return {"files": len(files), "parse_distill_ms_mean": round(statistics.fmean(times), 3),
            "parse_distill_ms_p95": round(_pct(times, 0.95), 3)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    repeats = 1 if args.quick else 5

    # embeddings on (the default) and off: overhead excludes model time either way
    runs = [bench_episodes(repeats, use_embeddings=False), bench_episodes(1 if args.quick else 2, use_embeddings=True)]
    distill = bench_distill(3 if args.quick else 20)

    print(f"{'embeddings':>10} {'episodes':>8} {'steps':>6} {'overhead mean':>14} {'p50':>7} {'p95':>7} "
          f"{'device':>8} {'model':>9} {'total':>8}")
    for r in runs:
        print(f"{str(r['use_embeddings']):>10} {r['episodes']:>8} {r['steps']:>6} {r['overhead_ms_mean']:>11.2f} ms "
              f"{r['overhead_ms_p50']:>7.2f} {r['overhead_ms_p95']:>7.2f} {r['device_ms_mean']:>8.2f} "
              f"{r['model_ms_mean']:>9.2f} {r['total_ms_mean']:>8.2f}")
    if distill.get("files"):
        print(f"parse + distill of {distill['files']} real dumps: mean {distill['parse_distill_ms_mean']:.2f} ms, "
              f"p95 {distill['parse_distill_ms_p95']:.2f} ms")
    ok = all(r["overhead_ms_mean"] <= TARGET_MS for r in runs)
    print(f"target: mean overhead <= {TARGET_MS} ms per step -> {'MET' if ok else 'NOT MET'}")

    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"quick": args.quick, "target_ms": TARGET_MS, "target_met": ok,
                                   "episodes": runs, "distill": distill}, indent=2) + "\n")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
