"""Run every benchmark in this folder, one process each, and print where results went.

    python -m benchmarks.run_all            # full sizes
    python -m benchmarks.run_all --quick    # smaller sizes, for a smoke check
    python -m benchmarks.run_all extraction simulator   # only some

Each ``bench_<topic>.py`` prints its own table and writes
``benchmarks/results/<topic>.json``. Targets (pages/s, steps/s, ms per step,
RSS) are checked and reported by the benchmarks themselves, never by tests.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("only", nargs="*", help="topics to run (default: all)")
    parser.add_argument("--quick", action="store_true", help="pass --quick to every benchmark")
    args = parser.parse_args(argv)
    topics = sorted(p.stem.removeprefix("bench_") for p in HERE.glob("bench_*.py"))
    chosen = [t for t in topics if not args.only or t in args.only]
    unknown = set(args.only) - set(topics)
    if unknown:
        parser.error(f"unknown benchmark(s) {sorted(unknown)}; available: {', '.join(topics)}")
    failures = []
    for topic in chosen:
        cmd = [sys.executable, "-m", f"benchmarks.bench_{topic}"] + (["--quick"] if args.quick else [])
        print(f"\n=== {topic}: {' '.join(cmd[1:])}", flush=True)
        started = time.perf_counter()
        code = subprocess.call(cmd, cwd=HERE.parent)
        print(f"=== {topic}: exit {code} in {time.perf_counter() - started:.1f} s", flush=True)
        if code:
            failures.append(topic)
    print(f"\nresults in {HERE / 'results'}")
    if failures:
        print(f"failed: {', '.join(failures)}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
