"""Training time per model on the LETOR fixture, and scoring latency of one 20-page slate.

    .venv/bin/python -m benchmarks.bench_ranking [--quick] [--threads N]

For each learned model (lr, lambdamart, tmlp-lambdaloss, tmlp-neuralndcg):
fit on the LightGBM lambdarank fixture (../shared; 80% of the training
queries, early stopping on the other 20%), report the fit time and test
NDCG@5, then time ``predict`` on one 20-row slate (the size of a result
page: what `verirank rerank` does per query) and report p50/p95 over many
calls. Prints a table and writes benchmarks/results/bench_ranking.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
SHARED = Path(os.environ.get("VERIRANK_SHARED", ROOT.parent / "shared"))
LETOR = SHARED / "fixtures" / "letor" / "lightgbm-lambdarank"

from ranking.models import LEARNED_MODELS, make_model, split_by_query  # noqa: E402
from ranking.models.evaluation import evaluate_scores  # noqa: E402
from ranking.svmlight import load_svmlight  # noqa: E402


def _size(model) -> str:
    """What the fit produced, in the model's own unit."""
    if model.name == "lambdamart":
        return f"{model.best_iteration_} trees"
    if model.name.startswith("tmlp"):
        return f"{len(model.history_)} ep (best {model.best_epoch_ + 1})"
    return f"{model.n_pairs_} pairs"


def bench_model(name: str, train, test, epochs: int, threads: int, calls: int) -> dict:
    fit_mask, valid_mask = split_by_query(train.qids, 0.2, seed=42)
    params = {"seed": 42, "num_threads": threads} if name != "lr" else {"seed": 42}
    if name.startswith("tmlp"):
        params["epochs"] = epochs
    model = make_model(name, **params)
    started = time.perf_counter()
    model.fit(train.X[fit_mask], train.y[fit_mask], train.qids[fit_mask],
              eval_set=(train.X[valid_mask], train.y[valid_mask], train.qids[valid_mask]))
    fit_s = time.perf_counter() - started
    ndcg5 = evaluate_scores(model.predict(test.X, test.qids), test.y, test.qids).mean["NDCG@5"]

    # a 20-page slate: the first 20 test rows, as one query
    slate = test.X[:20]
    groups = np.zeros(20, dtype=np.int64)
    for _ in range(5):  # warm-up (lazy imports, allocator)
        model.predict(slate, groups)
    latencies = []
    for _ in range(calls):
        t0 = time.perf_counter()
        model.predict(slate, groups)
        latencies.append((time.perf_counter() - t0) * 1000)
    return {
        "model": name,
        "fit_s": round(fit_s, 3),
        "trained": _size(model),
        "test_ndcg@5": round(ndcg5, 4),
        "slate20_p50_ms": round(float(np.percentile(latencies, 50)), 3),
        "slate20_p95_ms": round(float(np.percentile(latencies, 95)), 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few TMLP epochs and latency calls")
    parser.add_argument("--threads", type=int, default=1, help="torch/LightGBM threads (default 1)")
    args = parser.parse_args(argv)
    epochs, calls = (3, 50) if args.quick else (20, 300)

    if not LETOR.is_dir():
        print(f"LETOR fixture not found at {LETOR} (set VERIRANK_SHARED)", file=sys.stderr)
        return 2
    train = load_svmlight(LETOR / "rank.train", LETOR / "rank.train.query")
    test = load_svmlight(LETOR / "rank.test", LETOR / "rank.test.query", n_features=train.X.shape[1])

    rows = [bench_model(name, train, test, epochs, args.threads, calls) for name in LEARNED_MODELS]
    header = ("model", "fit_s", "trained", "test_ndcg@5", "slate20_p50_ms", "slate20_p95_ms")
    print(f"LETOR fixture: {len(train)} train rows / {train.n_queries} queries, {train.X.shape[1]} features; "
          f"threads={args.threads}{' (quick)' if args.quick else ''}")
    print("  ".join(f"{h:>16s}" for h in header))
    for row in rows:
        print("  ".join(f"{str(row[h]):>16s}" for h in header))

    out = ROOT / "benchmarks" / "results" / "bench_ranking.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "quick": args.quick, "threads": args.threads, "tmlp_epochs": epochs, "latency_calls": calls,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
        "results": rows,
    }, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
