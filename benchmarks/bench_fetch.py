"""Fetcher throughput and memory against a local HTTP server.

    .venv/bin/python -m benchmarks.bench_fetch [--quick]

Serves N generated pages from tests/support/support_http.py on 127.0.0.1 and
measures ``Fetcher.fetch_all``: a cold pass (network), a warm pass (page
cache, fresh run file), and one 50 MiB streamed page cut at ``max_bytes``
(time and peak-RSS growth). Prints a table and writes
benchmarks/results/bench_fetch.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "support"))

from support_http import Reply, serve  # noqa: E402

from verirank_core.extraction_config import FetchConfig
from extraction.fetch import Fetcher  # noqa: E402
from extraction.pagecache import PageCache  # noqa: E402
from verirank_core.extraction_records import Page, SearchResult
from verirank_core.store import JsonlAppender


def _page(i: int, size: int) -> bytes:
    step = f"<li>Step {i}: open Settings, tap Display, then turn on Dark theme.</li>\n"
    body = step * max(1, size // len(step))
    return f"<html><head><title>Page {i}</title></head><body><ol>{body}</ol></body></html>".encode()


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def run(n_pages: int, page_kb: int, workers: int) -> dict:
    routes = {f"/p{i}": Reply(headers={"Content-Type": "text/html; charset=utf-8"}, body=_page(i, page_kb * 1024))
              for i in range(n_pages)}
    chunk = b"a" * 65536
    routes["/huge"] = Reply(headers={"Content-Type": "text/html"}, body=lambda: (chunk for _ in range(800)))
    config = FetchConfig(allow_private_hosts=True, workers=workers, per_host_concurrency=workers,
                         read_timeout_s=10, total_timeout_s=60)
    out: dict = {"n_pages": n_pages, "page_kb": page_kb, "workers": workers}
    with serve(routes) as srv, tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        cache = PageCache(tmp / "cache")
        results = [SearchResult(qid=f"q{i // 20}", rank=i % 20 + 1, url=srv.url(f"/p{i}")) for i in range(n_pages)]
        for label, run_file in (("cold", "pages1.jsonl"), ("warm", "pages2.jsonl")):
            with JsonlAppender(tmp / run_file, Page) as app:
                t0 = time.perf_counter()
                counts = Fetcher(config, cache).fetch_all(results, app)
                dt = time.perf_counter() - t0
            out[label] = {"seconds": round(dt, 3), "pages_per_s": round(n_pages / dt, 1),
                          "ok": counts.get("ok", 0), "from_cache": counts["from_cache"]}

        rss_before = _peak_rss_mb()
        t0 = time.perf_counter()
        page = Fetcher(config, cache).fetch(SearchResult(qid="big", rank=1, url=srv.url("/huge")))
        out["huge_50mib"] = {
            "seconds": round(time.perf_counter() - t0, 3), "status": page.status.value,
            "kept_bytes": page.n_bytes, "max_bytes": config.max_bytes,
            "peak_rss_growth_mb": round(_peak_rss_mb() - rss_before, 1),
        }
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 pages instead of 300")
    args = parser.parse_args(argv)
    res = run(n_pages=50 if args.quick else 300, page_kb=30, workers=8)
    print(f"{'pass':<8}{'seconds':>10}{'pages/s':>10}{'ok':>6}{'cached':>8}")
    for label in ("cold", "warm"):
        r = res[label]
        print(f"{label:<8}{r['seconds']:>10}{r['pages_per_s']:>10}{r['ok']:>6}{r['from_cache']:>8}")
    h = res["huge_50mib"]
    print(f"50 MiB page: {h['status']}, kept {h['kept_bytes']} bytes in {h['seconds']} s, "
          f"peak RSS +{h['peak_rss_growth_mb']} MB")
    res["quick"] = args.quick
    target = ROOT / "benchmarks" / "results" / "bench_fetch.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(res, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {target.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
