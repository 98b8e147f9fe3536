"""Stage 1 on unlabelled real text: is a text read alike in every page structure?

    .venv/bin/python -m benchmarks.bench_structure_agreement [--quick] [--texts N]

``bench_steps_real`` measures stage 1 against labels, but only on the 185 texts of
real-dev; rules tuned there may not carry to other real text. This benchmark takes
``--texts`` (300) texts of ``../shared/real-text/`` (help sites, wikiHow, forums; see
``benchmarks/real_text.py``), asks the question each URL names, renders each text into the
structures of ``real_dev_pages.py`` and runs stage 1 on every page (clean, heuristic
extraction, grounding). The plain list (``ol``) is the reference, being the plainest page;
for every other structure it counts the texts read:

* ``agree``: the structure's steps cover the list's (ROUGE-L recall >= 0.8, precision >= 0.5);
* ``fewer`` / ``more``: part of the list's steps, or many more;
* ``none`` / ``only_here``: steps on one page and none on the other.

Agreement is not correctness (the texts carry no labels, and the list page may be the
one that is wrong); a disagreement is a page to read. They are listed per structure in
``benchmarks/results/structure_agreement.json``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from pathlib import Path

from benchmarks.bench_steps_real import Stage1
from benchmarks.real_dev_pages import STRUCTURES, render
from benchmarks.real_text import REAL_TEXT, load_real_texts

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "structure_agreement.json"
#: every structure but the reference and the menu-path one (only texts holding a path fit it)
COMPARED = tuple(s for s in STRUCTURES if s not in ("ol", "breadcrumb"))


def compare(reference: list[str], steps: list[str]) -> str:
    """How a structure's steps stand to the reference list's."""
    from extraction.stepmatch import MIN_PRECISION, MIN_RECALL, step_match

    if not reference:
        return "only_here" if steps else "agree"
    if not steps:
        return "none"
    recall, precision = step_match(reference, steps)
    if recall < MIN_RECALL:
        return "fewer"
    return "agree" if precision >= MIN_PRECISION else "more"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="60 texts")
    parser.add_argument("--texts", type=int, default=300, help="how many real-text texts (default 300)")
    parser.add_argument("--seed", type=int, default=7, help="which texts are drawn")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    texts = load_real_texts(60 if args.quick else args.texts, seed=args.seed)
    if not texts:
        print(f"skipped: no texts in {REAL_TEXT}")
        return 0
    stage1 = Stage1()
    stage1.encoder.encode(["warm up"])
    started = time.perf_counter()
    counts = {s: Counter() for s in COMPARED}
    differ: dict[str, list[dict]] = {s: [] for s in COMPARED}
    for n, text in enumerate(texts, 1):
        reference = stage1.run(render(text, "ol", texts))
        for structure in COMPARED:
            out = stage1.run(render(text, structure, texts))
            verdict = compare(reference.steps, out.steps)
            counts[structure][verdict] += 1
            if verdict != "agree":
                differ[structure].append({"text": text.pid, "query": text.query, "verdict": verdict,
                                          "list": reference.reason[:160], "here": out.reason[:200]})
        if n % 50 == 0:
            print(f"  {n}/{len(texts)} texts", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started

    kinds = ("agree", "fewer", "more", "none", "only_here")
    print(f"{'structure':<16} " + " ".join(f"{k:>9}" for k in kinds))
    for structure in COMPARED:
        print(f"{structure:<16} " + " ".join(f"{counts[structure][k]:>9}" for k in kinds))
    pages = len(texts) * (1 + len(COMPARED))
    print(f"{len(texts)} texts, {pages} pages in {elapsed:.1f} s; agreement with the list page per structure: "
          + ", ".join(f"{s} {counts[s]['agree'] / len(texts):.2f}" for s in COMPARED))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "benchmark": "structure_agreement", "quick": args.quick, "seed": args.seed, "texts": len(texts),
        "seconds": round(elapsed, 1), "machine": {"python": platform.python_version(), "platform": sys.platform},
        "agreement": {s: round(counts[s]["agree"] / len(texts), 3) for s in COMPARED},
        "counts": {s: dict(counts[s]) for s in COMPARED},
        "differ": differ,
    }, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
