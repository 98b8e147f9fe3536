"""Stage-1 throughput: clean + heuristic extraction + grounding, in pages per second.

    .venv/bin/python -m benchmarks.bench_extraction [--quick] [--pages N]

Generates N how-to pages (default 360; --quick 90) from
``benchmarks/extraction_pages.py`` (20 Android tasks x 9 page styles x seeds),
serves them from a local HTTP server on 127.0.0.1, runs search -> fetch ->
extract into a temporary run directory, and reports

* extract pages/s (cleaning, heuristic extraction and grounding; the
  MiniLM model is loaded before the clock starts) — target >= 10;
* peak resident memory of the process — target <= 1.5 GB;
* fetch pages/s (for reference; the network edge has its own benchmark);
* quality: recall on pages with steps, false extractions on pages without.

Prints a table and writes benchmarks/results/extraction.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.extraction_pages import STYLES, TOPICS, render

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "extraction.json"
TARGET_PAGES_PER_S = 10.0
TARGET_RSS_GB = 1.5


def _peak_rss_gb() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 ** 3 if sys.platform == "darwin" else 1024 ** 2)


def _write_corpus(site: Path, n_pages: int) -> list[dict]:
    """Pages under site/pages/, and one row per page: qid, file, has_steps."""
    (site / "pages").mkdir(parents=True)
    rows = []
    seed = 0
    while len(rows) < n_pages:
        for topic in TOPICS:
            for style in STYLES:
                if len(rows) == n_pages:
                    break
                html, positive = render(topic, style, seed)
                name = f"{topic.key}-{style}-{seed}.html"
                (site / "pages" / name).write_text(html, "utf-8")
                rows.append({"qid": f"{topic.key}-{seed}", "query": topic.query, "file": name, "has_steps": positive})
        seed += 1
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="90 pages instead of 360")
    parser.add_argument("--pages", type=int, default=None, help="number of pages (overrides --quick)")
    args = parser.parse_args(argv)
    n_pages = args.pages or (90 if args.quick else 360)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    from extraction.localsite import serve_folder
    from extraction.pipeline import extract_stage, fetch_stage, search_stage
    from verirank_core.extraction_records import Extraction
    from verirank_core.config import load_config
    from verirank_core.embed import default_encoder
    from verirank_core.store import RunDir, read_jsonl

    with tempfile.TemporaryDirectory(prefix="bench-extraction-") as tmp:
        tmp = Path(tmp)
        rows = _write_corpus(tmp / "site", n_pages)
        config = load_config(overrides=[{"extraction": {"fetch": {"allow_private_hosts": True, "retries": 0}}}])

        started = time.perf_counter()
        encoder = default_encoder()
        encoder.encode(["warm up"])
        load_s = time.perf_counter() - started

        with serve_folder(tmp / "site") as base:
            queries = {r["qid"]: r["query"] for r in rows}
            (tmp / "queries.jsonl").write_text(
                "".join(json.dumps({"qid": q, "query": text}) + "\n" for q, text in queries.items()), "utf-8")
            ranks: dict[str, int] = {}
            serp_lines = []
            for r in rows:
                ranks[r["qid"]] = ranks.get(r["qid"], 0) + 1
                serp_lines.append(json.dumps({"qid": r["qid"], "rank": ranks[r["qid"]],
                                              "url": f"{base}/pages/{r['file']}"}))
            (tmp / "serp.jsonl").write_text("\n".join(serp_lines) + "\n", "utf-8")
            run = RunDir(tmp / "run").ensure()
            search_stage(run, config, tmp / "queries.jsonl", tmp / "serp.jsonl")
            t0 = time.perf_counter()
            fetch_counts = fetch_stage(run, config)
            fetch_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        counts = extract_stage(run, config, encoder=encoder)
        extract_s = time.perf_counter() - t0
        records = {e.url.rsplit("/", 1)[1]: e for e in read_jsonl(run / "extraction.jsonl", Extraction)}

    positives = [r for r in rows if r["has_steps"]]
    negatives = [r for r in rows if not r["has_steps"]]
    recall = sum(records[r["file"]].has_steps for r in positives) / max(1, len(positives))
    false_rate = sum(records[r["file"]].has_steps for r in negatives) / max(1, len(negatives))
    pages_per_s = n_pages / extract_s
    rss = _peak_rss_gb()
    result = {
        "pages": n_pages,
        "extract_seconds": round(extract_s, 3),
        "extract_pages_per_s": round(pages_per_s, 2),
        "fetch_seconds": round(fetch_s, 3),
        "fetch_pages_per_s": round(n_pages / fetch_s, 2),
        "model_load_seconds": round(load_s, 2),
        "peak_rss_gb": round(rss, 3),
        "recall_pages_with_steps": round(recall, 4),
        "false_extraction_rate": round(false_rate, 4),
        "statuses": {k: v for k, v in counts.items() if k in ("ok", "no_steps", "parse_failed", "fetch_failed",
                                                                "extractor_failed")},
        "fetch_statuses": {k: v for k, v in fetch_counts.items() if k in ("ok", "http_error", "timeout")},
        "targets": {"extract_pages_per_s": TARGET_PAGES_PER_S, "peak_rss_gb": TARGET_RSS_GB},
        "met": {"extract_pages_per_s": pages_per_s >= TARGET_PAGES_PER_S, "peak_rss_gb": rss <= TARGET_RSS_GB},
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_avg_1m": round(os.getloadavg()[0], 2)},
        "quick": bool(args.quick),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", "utf-8")

    print(f"{'metric':<34}{'value':>12}  target")
    print(f"{'pages':<34}{n_pages:>12}")
    print(f"{'extract pages/s (clean+extract+ground)':<34}{pages_per_s:>12.2f}  >= {TARGET_PAGES_PER_S}")
    print(f"{'peak RSS (GB)':<34}{rss:>12.3f}  <= {TARGET_RSS_GB}")
    print(f"{'fetch pages/s':<34}{n_pages / fetch_s:>12.2f}")
    print(f"{'model load (s, not timed above)':<34}{load_s:>12.2f}")
    print(f"{'recall on pages with steps':<34}{recall:>12.3f}  >= 0.95")
    print(f"{'false extractions on pages without':<34}{false_rate:>12.3f}  <= 0.02")
    print(f"{'machine load (1 min)':<34}{os.getloadavg()[0]:>12.2f}")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
