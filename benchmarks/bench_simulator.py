"""Simulator speed: steps per second (a step = one input + one uiautomator dump), and with screenshots.

Target: >= 1,000 steps/s without screenshots on one core. It also times loading
each world file (parse + validate + compile), best of three: every worker process
loads its world before its first page, so a world that grows must stay quick to load.

    .venv/bin/python -m benchmarks.bench_simulator [--quick]

Each world is driven by a fixed, deterministic walk that a real agent would
resemble: tap the controls of the current screen in turn, scroll, go back.
Results are printed as a table and written to benchmarks/results/bench_simulator.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

from phonesim.simulator import Simulator
from phonesim.world import load_world

WORLDS = ("android13-settings", "android9-settings", "video-app", "maps-app")
#: worlds whose load time is measured too (the imported OnePlus world is the largest: ~680 screens)
LOAD_ONLY = ("imported/oneplus-settings-android11",)
RESULTS = Path(__file__).resolve().parent / "results" / "bench_simulator.json"


def _walk(sim: Simulator, steps: int, screenshots: bool) -> dict[str, float]:
    """Run ``steps`` inputs, each followed by a dump (and a screenshot); return timings."""
    sim.reset(sim.world.app.package)
    dump_bytes = 0
    png_bytes = 0
    started = time.perf_counter()
    for i in range(steps):
        nodes = sim.clickable_nodes()
        if i % 7 == 6:
            sim.key("back")
        elif i % 11 == 10 and sim.window().max_scroll > 0:
            top, bottom = sim.window().viewport
            sim.swipe(540, bottom - 40, 540, top + 40)
        elif nodes:
            x1, y1, x2, y2 = nodes[(i * 5) % len(nodes)].bounds
            sim.tap((x1 + x2) // 2, (y1 + y2) // 2)
        if sim.screen_id == "launcher":
            sim.launch(sim.world.app.package)
        dump_bytes += len(sim.dump_xml())
        if screenshots:
            png_bytes += len(sim.screenshot_png())
    elapsed = time.perf_counter() - started
    return {"steps": steps, "seconds": round(elapsed, 4), "steps_per_s": round(steps / elapsed, 1),
            "avg_dump_kb": round(dump_bytes / steps / 1024, 1),
            "avg_png_kb": round(png_bytes / steps / 1024, 1) if screenshots else None}


def _cold_layout(sim: Simulator, steps: int) -> dict[str, float]:
    """The worst case: every dump laid out from scratch (layout cache cleared each step)."""
    sim.reset(sim.world.app.package)
    started = time.perf_counter()
    for i in range(steps):
        sim._window_cache.clear()  # noqa: SLF001 - measuring the uncached path on purpose
        sim._invalidate()  # noqa: SLF001
        sim.dump_xml()
    elapsed = time.perf_counter() - started
    return {"steps": steps, "seconds": round(elapsed, 4), "steps_per_s": round(steps / elapsed, 1)}


def _load_ms(name: str, repeat: int = 3) -> float:
    """Best-of-``repeat`` time to load a world file, in milliseconds."""
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        load_world(name)
        best = min(best, time.perf_counter() - started)
    return round(best * 1000, 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer steps (a smoke run)")
    args = parser.parse_args()
    steps, shot_steps = (300, 10) if args.quick else (3000, 60)
    rows = []
    for name in WORLDS:
        world = load_world(name)
        sim = Simulator(world)
        dump_only = _walk(sim, steps, screenshots=False)
        with_png = _walk(sim, shot_steps, screenshots=True)
        cold = _cold_layout(sim, max(20, steps // 10))
        rows.append({"world": name, "screens": len(world.screens), "load_ms": _load_ms(name), "dump+tap": dump_only,
                     "dump+tap+png": with_png, "uncached dump": cold})
    header = (f"{'world':<38} {'screens':>7} {'load ms':>8} {'dump+tap steps/s':>17} {'+png steps/s':>13} "
              f"{'uncached dump/s':>16} {'dump KB':>8} {'png KB':>7}")
    print(header)
    print("-" * len(header))
    for r in rows:
        print(f"{r['world']:<38} {r['screens']:>7} {r['load_ms']:>8.0f} {r['dump+tap']['steps_per_s']:>17.0f} {r['dump+tap+png']['steps_per_s']:>13.1f} "
              f"{r['uncached dump']['steps_per_s']:>16.0f} {r['dump+tap']['avg_dump_kb']:>8.1f} "
              f"{r['dump+tap+png']['avg_png_kb']:>7.1f}")
    loads = [{"world": name, "screens": len(load_world(name).screens), "load_ms": _load_ms(name)}
             for name in LOAD_ONLY]
    for r in loads:
        print(f"{r['world']:<38} {r['screens']:>7} {r['load_ms']:>8.0f}   (load time only)")
    slowest = min(r["dump+tap"]["steps_per_s"] for r in rows)
    verdict = "OK" if slowest >= 1000 else "BELOW TARGET"
    print(f"\nslowest dump+tap: {slowest:.0f} steps/s (target >= 1000): {verdict}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({
        "benchmark": "simulator", "quick": args.quick, "python": platform.python_version(),
        "machine": platform.machine(), "target_steps_per_s": 1000, "slowest_steps_per_s": slowest,
        "verdict": verdict, "worlds": rows, "load_only": loads,
    }, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
