"""Table 7: step extraction with and without grounding.

    python -m experiments.table7 [--small] [--out DIR]

Runs stage 1 over the benchmark twice: with grounding (``OUT/run``, shared with
the other experiments) and with ``extraction.ground.enabled=false``
(``OUT/run-noground``, reusing the first run's fetched pages). Each page is
labelled from the benchmark's page metadata (evaluation only): it has
instruction steps for the query (``has_steps``) or not.

* **Pages with steps**: a page counts as a *true positive* when the extracted
  steps are the page's steps: ROUGE-L recall of the page's step text (all
  steps joined) by the extracted text is >= 0.8, and ROUGE-L precision is
  >= 0.5 (so a bait list extracted instead does not count). Recall = TP / pages
  with steps. The looser "any steps extracted" rate is reported too.
* **Pages without steps**: any extracted step is a *false extraction*.
  False-extraction rate = pages with steps extracted / pages without steps.

Targets from the issue: recall >= 0.95, false-extraction rate <= 2%.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Optional

from extraction.ground import lcs_length
from experiments.common import (
    base_parser, ensure_bench, entry_point, fmt, log, md_table, pipeline_config, prepare, read_page_labels,
    run_facts, run_pipeline, tracked, write_result,
)

NAME = "table7"
#: a page's steps count as extracted when this much of their text is recovered ...
MIN_RECALL = 0.8
#: ... and this much of the extracted text is theirs
MIN_PRECISION = 0.5
TARGET_RECALL, TARGET_FALSE_RATE = 0.95, 0.02
SETTINGS: tuple[tuple[str, str, bool], ...] = (("With grounding", "run", True),
                                               ("Without grounding", "run-noground", False))

_WORD = re.compile(r"[a-z0-9]+")


def words(texts: list[str]) -> list[str]:
    """Lower-case word tokens of a list of step texts (guillemet markers and punctuation dropped)."""
    return [w for t in texts for w in _WORD.findall(t.lower())]


def step_match(page_steps: list[str], extracted: list[str]) -> tuple[float, float]:
    """(recall, precision): ROUGE-L of the extracted text against the page's step text."""
    ref, got = words(page_steps), words(extracted)
    lcs = lcs_length(ref, got)
    return (lcs / len(ref) if ref else 0.0), (lcs / len(got) if got else 0.0)


def score_extractions(extractions: dict, labels: dict) -> dict[str, Any]:
    """Counts and rates of one extraction run against the page labels."""
    with_steps = [k for k, lab in labels.items() if lab.get("has_steps")]
    without = [k for k, lab in labels.items() if not lab.get("has_steps")]
    tp = any_steps = 0
    wrong = []
    for key in with_steps:
        ext = extractions.get(key)
        steps = [s.text for s in ext.steps] if ext is not None and ext.has_steps else []
        if not steps:
            continue
        any_steps += 1
        recall, precision = step_match(labels[key]["steps"], steps)
        if recall >= MIN_RECALL and precision >= MIN_PRECISION:
            tp += 1
        else:
            wrong.append({"qid": key[0], "url": key[1], "recall": round(recall, 3), "precision": round(precision, 3)})
    fp = [k for k in without if extractions.get(k) is not None and extractions[k].has_steps]
    fp_by_variant: dict[str, int] = {}
    for k in fp:
        v = labels[k]["variant"]
        fp_by_variant[v] = fp_by_variant.get(v, 0) + 1
    return {
        "pages_with_steps": len(with_steps), "pages_without_steps": len(without),
        "true_positives": tp, "any_steps_on_pages_with_steps": any_steps,
        "false_extractions": len(fp),
        "recall": tp / len(with_steps) if with_steps else None,
        "any_steps_rate": any_steps / len(with_steps) if with_steps else None,
        "false_extraction_rate": len(fp) / len(without) if without else None,
        "false_extractions_by_variant": dict(sorted(fp_by_variant.items())),
        "mismatched_pages": wrong,
        "missing_records": sum(1 for k in labels if k not in extractions),
    }


def raw_output_mismatches(a: dict, b: dict) -> list[tuple[str, str]]:
    """Pages whose extractor output (``raw_steps``, before grounding) differs between two runs.

    Grounding never changes what the extractor returns, so any difference
    means the runs were made by different extractor code or settings, and
    the comparison would not isolate grounding.
    """
    return sorted(k for k in a.keys() & b.keys() if list(a[k].raw_steps) != list(b[k].raw_steps))


def _load_extractions(run_dir: Path) -> dict:
    from verirank_core.extraction_records import Extraction
    from verirank_core.store import read_jsonl

    return {e.key(): e for e in read_jsonl(run_dir / "extraction.jsonl", Extraction)}


def run(argv: Optional[list[str]] = None) -> dict[str, Any]:
    args = base_parser("python -m experiments.table7", __doc__.split("\n\n")[0]).parse_args(argv)
    setup = prepare(args)
    bench = ensure_bench(setup)
    labels = read_page_labels(bench)
    scores, extractions = {}, {}
    for title, folder, grounding in SETTINGS:
        config = pipeline_config(setup.config, bench, args.devices)
        config.extraction.ground.enabled = grounding
        run_dir = setup.out / folder
        # the grounded run is OUT/run, shared with the other experiments (it may already be complete)
        run_pipeline(bench, run_dir, config, until="extract",
                     copy_pages_from=None if grounding else setup.run_dir)
        extractions[title] = _load_extractions(run_dir)
        scores[title] = score_extractions(extractions[title], labels)
    mismatched = raw_output_mismatches(*extractions.values())
    warning = ""
    if mismatched:
        warning = (f"**Warning: the extractor's raw output differs between the two runs on {len(mismatched)} "
                   "pages, so they were made by different extractor code or settings and the difference is not "
                   f"grounding alone. Delete {setup.out / 'run-noground'} and run again.**\n")
        log(f"warning: raw extractor output differs on {len(mismatched)} pages between the two runs")

    headers = ["Setting", "Pages with steps", "Steps extracted (TP)", "Recall", "Any steps extracted",
               "Pages without steps", "False extractions", "False-extraction rate"]
    rows = [[title, s["pages_with_steps"], s["true_positives"], fmt(s["recall"]),
             fmt(s["any_steps_rate"]), s["pages_without_steps"], s["false_extractions"],
             fmt(s["false_extraction_rate"])] for title, s in scores.items()]
    g = scores["With grounding"]
    verdict = (f"With grounding: recall {fmt(g['recall'])} (target >= {TARGET_RECALL}: "
               f"{'met' if (g['recall'] or 0) >= TARGET_RECALL else 'not met'}), false-extraction rate "
               f"{fmt(g['false_extraction_rate'])} (target <= {TARGET_FALSE_RATE}: "
               f"{'met' if (g['false_extraction_rate'] or 0) <= TARGET_FALSE_RATE else 'not met'}).")
    fp_rows = []
    variants = sorted({v for s in scores.values() for v in s["false_extractions_by_variant"]})
    for v in variants:
        fp_rows.append([v, *(s["false_extractions_by_variant"].get(v, 0) for s in scores.values())])
    facts = run_facts(setup, bench, [setup.out / "run-noground"])
    markdown = "\n".join([
        f"# Table 7: extraction with and without grounding ({facts['benchmark']['name']})",
        "",
        f"Extractor `{facts['extractor']}`. A page's steps count as extracted when ROUGE-L recall of its step "
        f"text is >= {MIN_RECALL} and precision >= {MIN_PRECISION}; on a page without steps any extracted "
        "step is a false extraction. Labels: the benchmark's page metadata (evaluation only).",
        "",
        md_table(headers, rows),
        warning,
        verdict,
        "",
        "## False extractions by page variant",
        "",
        md_table(["Variant", *scores], fp_rows) if fp_rows else "No false extractions.\n",
        f"Code: {facts['code']}; {facts['date']}.",
        "",
    ])
    data = {"experiment": NAME, "size": setup.size, **facts, "min_recall": MIN_RECALL,
            "min_precision": MIN_PRECISION, "settings": scores,
            "raw_output_mismatches": [list(k) for k in mismatched],
            "targets": {"recall": TARGET_RECALL, "false_extraction_rate": TARGET_FALSE_RATE}}
    with tracked(setup, NAME) as tracker:
        for title, s in scores.items():
            key = "grounding" if title == "With grounding" else "no_grounding"
            tracker.metrics({"recall": s["recall"], "false_extraction_rate": s["false_extraction_rate"],
                             "any_steps_rate": s["any_steps_rate"]}, prefix=f"{key}.")
        paths = write_result(setup, NAME, markdown, {**data, "mlflow_run_id": tracker.run_id})
        tracker.artifacts(list(paths.values()))
    return {**data, "paths": paths}


main = entry_point(run)

if __name__ == "__main__":
    raise SystemExit(main())
