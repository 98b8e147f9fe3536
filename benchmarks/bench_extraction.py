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

Then, in the same run, on real files:

* the 100 real pages of ``../shared/real-html/sample/``: stage 1 (clean, heuristic
  extraction and grounding) side by side with ``trafilatura.extract`` on the same
  bytes, both with 2 worker processes (the target machine's 2 cores) — target
  >= 20 pages/s, reported as a ratio to trafilatura (an optional benchmark
  dependency: ``pip install verirank[bench]``; skipped with a note without it);
* the real-style pages of ``tests/fixtures/stage1_styles/``: lenient ("any
  steps") and strict (the labelled step list found whole: ROUGE-L recall >= 0.8,
  precision >= 0.5, ``extraction/stepmatch.py``) recall and false extractions,
  per page style.

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


SHARED = Path(os.environ.get("VERIRANK_SHARED", ROOT.parent / "shared"))
STYLE_PAGES = ROOT / "tests" / "fixtures" / "stage1_styles"
TARGET_REAL_PAGES_PER_S = 20.0
_WORKER: dict = {}


def _init_worker() -> None:
    """One encoder and extractor per worker process, loaded before the clock starts."""
    import torch

    from verirank_core.extraction_config import ExtractConfig
    from extraction.heuristic import HeuristicExtractor
    from verirank_core.embed import default_encoder

    torch.set_num_threads(1)
    encoder = default_encoder()
    encoder.encode(["warm up"])
    _WORKER["encoder"] = encoder
    _WORKER["extractor"] = HeuristicExtractor(ExtractConfig(), encoder)


def _stage1_file(path: str) -> str:
    from extraction.clean import clean_page
    from extraction.ground import ground_steps
    from verirank_core.extraction_records import Query
    from verirank_core.errors import ExtractionError

    try:
        page = clean_page(Path(path).read_bytes(), url="http://bench.test/" + Path(path).name, qid="q")
    except ExtractionError:
        return "parse_failed"
    out = _WORKER["extractor"].extract(Query(qid="q", query="how to turn on dark mode"), page)
    if not out.steps:
        return "no_steps"
    return "ok" if ground_steps(out.steps, page, _WORKER["encoder"]).steps else "no_steps"


def _clean_file(path: str) -> str:
    from extraction.clean import clean_page
    from verirank_core.errors import ExtractionError

    try:
        clean_page(Path(path).read_bytes(), url="http://bench.test/x", qid="q")
        return "ok"
    except ExtractionError:
        return "parse_failed"


def _trafilatura_file(path: str) -> str:
    import trafilatura

    return "ok" if trafilatura.extract(Path(path).read_bytes()) else "empty"


def _timed_pool(fn, files: list[str], workers: int, init=None) -> tuple[float, dict]:
    from concurrent.futures import ProcessPoolExecutor

    with ProcessPoolExecutor(max_workers=workers, initializer=init) as pool:
        list(pool.map(_noop, range(workers * 2)))  # workers started (and models loaded) before the clock
        t0 = time.perf_counter()
        results = list(pool.map(fn, files, chunksize=4))
        elapsed = time.perf_counter() - t0
        peak = max(pool.map(_peak_rss_gb_of_worker, range(workers)))
    counts: dict = {}
    for r in results:
        counts[r] = counts.get(r, 0) + 1
    return elapsed, {"counts": counts, "worker_peak_rss_gb": round(peak, 3)}


def _noop(_: int) -> None:
    time.sleep(0.05)


def _peak_rss_gb_of_worker(_: int) -> float:
    time.sleep(0.05)
    return _peak_rss_gb()


def real_pages(workers: int = 2) -> dict:
    """Stage 1 and trafilatura on the same 100 real sample pages, pages/s and ratios."""
    files = sorted(str(p) for p in (SHARED / "real-html" / "sample").glob("*.html"))
    if not files:
        return {"skipped": f"no pages under {SHARED / 'real-html' / 'sample'}"}
    out: dict = {"pages": len(files), "workers": workers}
    stage1_s, stage1 = _timed_pool(_stage1_file, files, workers, _init_worker)
    clean_s, _ = _timed_pool(_clean_file, files, workers)
    out["stage1_pages_per_s"] = round(len(files) / stage1_s, 2)
    out["clean_pages_per_s"] = round(len(files) / clean_s, 2)
    out["stage1_statuses"] = stage1["counts"]
    out["stage1_worker_peak_rss_gb"] = stage1["worker_peak_rss_gb"]
    try:
        import trafilatura  # noqa: F401
    except ImportError:
        out["trafilatura"] = "not installed (pip install verirank[bench])"
        return out
    traf_s, traf = _timed_pool(_trafilatura_file, files, workers)
    out["trafilatura_pages_per_s"] = round(len(files) / traf_s, 2)
    out["trafilatura_statuses"] = traf["counts"]
    out["stage1_vs_trafilatura"] = round(traf_s / stage1_s, 3)
    out["clean_vs_trafilatura"] = round(traf_s / clean_s, 3)
    return out


def style_quality(encoder) -> dict:
    """Lenient and strict recall and false extractions per page style on the real-style fixture pages."""
    from extraction.clean import clean_page
    from verirank_core.extraction_config import ExtractConfig
    from extraction.ground import ground_steps
    from extraction.heuristic import HeuristicExtractor
    from verirank_core.extraction_records import Query
    from extraction.stepmatch import found_whole

    labels_path = STYLE_PAGES / "labels.json"
    if not labels_path.exists():
        return {"skipped": f"no {labels_path}"}
    per: dict = {}
    for lab in json.loads(labels_path.read_text("utf-8"))["pages"]:
        page = clean_page((STYLE_PAGES / "pages" / lab["file"]).read_bytes(), url="http://bench.test/x", qid="q")
        extractor = HeuristicExtractor(ExtractConfig(device=lab["device"] or "Android"), encoder)
        out = extractor.extract(Query(qid="q", query=lab["query"]), page)
        steps = [s.text for s in ground_steps(out.steps, page, encoder).steps]
        row = per.setdefault(lab["style"], {"with_steps": 0, "any": 0, "strict": 0, "without_steps": 0, "false": 0})
        if lab["has_steps"]:
            row["with_steps"] += 1
            row["any"] += bool(steps)
            row["strict"] += found_whole(lab["steps"], steps)
        else:
            row["without_steps"] += 1
            row["false"] += bool(steps)
    for row in per.values():
        n, m = row["with_steps"], row["without_steps"]
        row["any_rate"] = round(row["any"] / n, 3) if n else None
        row["strict_recall"] = round(row["strict"] / n, 3) if n else None
        row["false_rate"] = round(row["false"] / m, 3) if m else None
    return per


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
    styles = style_quality(encoder)
    real = real_pages()
    rss = max(_peak_rss_gb(), real.get("stage1_worker_peak_rss_gb", 0.0))
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
        "real_pages": real,
        "styles": styles,
        "targets": {"extract_pages_per_s": TARGET_PAGES_PER_S, "peak_rss_gb": TARGET_RSS_GB,
                    "real_stage1_pages_per_s": TARGET_REAL_PAGES_PER_S},
        "met": {"extract_pages_per_s": pages_per_s >= TARGET_PAGES_PER_S, "peak_rss_gb": rss <= TARGET_RSS_GB,
                "real_stage1_pages_per_s": real.get("stage1_pages_per_s", 0) >= TARGET_REAL_PAGES_PER_S},
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
    print(f"\nreal sample pages ({real.get('pages', 0)}, {real.get('workers', 0)} workers):")
    for key in ("stage1_pages_per_s", "clean_pages_per_s", "trafilatura_pages_per_s", "stage1_vs_trafilatura",
                "clean_vs_trafilatura", "stage1_worker_peak_rss_gb"):
        if key in real:
            print(f"  {key:<32}{real[key]:>12}")
    print(f"\n{'style':<24}{'with':>6}{'any':>8}{'strict':>8}{'without':>9}{'false':>7}")
    for style, row in styles.items() if isinstance(styles, dict) else []:
        if isinstance(row, dict):
            print(f"{style:<24}{row['with_steps']:>6}{str(row['any_rate']):>8}{str(row['strict_recall']):>8}"
                  f"{row['without_steps']:>9}{str(row['false_rate']):>7}")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
