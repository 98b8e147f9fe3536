"""Table 6: how the judge's F4 is distributed over pages with and without full instructions.

    python -m experiments.table6 [--small] [--out DIR]

Runs (or reuses) the pipeline over the benchmark up to execution, then bins
every page's F4 (0 when the page was not executed) as in the paper:
``F4 = 0``, ``0 < F4 < 0.5``, ``0.5 <= F4 < 1``, ``F4 = 1``.

Pages are grouped by the benchmark's page variant (hidden labels, used here
for evaluation only):

* **full instructions**: ``correct``, ``paraphrased``, and ``bait`` pages that
  also carry the right steps;
* **no or partial instructions**: ``no_steps``, ``partial`` (the last step or
  two missing), and ``bait`` pages whose only lists are unrelated;
* **instructions for another version**: ``outdated`` and ``other_platform``
  (complete steps, but for another app version or phone).

The headline is the share of no/partial pages the judge scores F4 = 1 (the
paper's judge: about 25%; lower is better).
"""

from __future__ import annotations

from typing import Any, Optional

from experiments.common import (
    base_parser, bench_qrels, ensure_bench, entry_point, md_table, pipeline_config, prepare,
    read_page_labels, run_facts, run_pipeline, tracked, write_result,
)

NAME = "table6"
FULL, NO_OR_PARTIAL, OTHER_VERSION = "Full instructions", "No or partial instructions", "Instructions for another version"
GROUPS: tuple[str, ...] = (FULL, NO_OR_PARTIAL, OTHER_VERSION)
BINS: tuple[str, ...] = ("F4 = 0", "0 < F4 < 0.5", "0.5 <= F4 < 1", "F4 = 1")


def instruction_group(label: dict[str, Any]) -> str:
    """The Table 6 group of a page from its benchmark label (variant, bait_with_steps)."""
    variant = label.get("variant")
    if variant in ("correct", "paraphrased") or (variant == "bait" and label.get("bait_with_steps")):
        return FULL
    if variant in ("outdated", "other_platform"):
        return OTHER_VERSION
    if variant in ("no_steps", "partial", "bait"):
        return NO_OR_PARTIAL
    raise ValueError(f"unknown page variant {variant!r}")


def f4_bin(f4: float) -> str:
    """The paper's bin of an F4 value in [0, 1]."""
    if f4 <= 0.0:
        return BINS[0]
    if f4 < 0.5:
        return BINS[1]
    if f4 < 1.0:
        return BINS[2]
    return BINS[3]


def page_f4(run_dir: Any) -> dict[tuple[str, str], tuple[float, bool]]:
    """(F4, executed) of every page of the run (F4 = 0 for pages never executed)."""
    from verirank_core.execution_records import ExecutionResult
    from ranking.verified import facts_from_execution
    from verirank_core.store import read_jsonl

    out = {}
    for rec in read_jsonl(run_dir / "execution.jsonl", ExecutionResult):
        facts = facts_from_execution(rec)
        out[rec.key()] = (facts.f4, facts.executed)
    return out


def distribution(keys_by_group: dict[str, list], f4: dict) -> dict[str, dict[str, Any]]:
    """Per group: pages, executed pages, and counts and shares per bin."""
    out = {}
    for group, keys in keys_by_group.items():
        counts = {b: 0 for b in BINS}
        executed = 0
        for key in keys:
            value, ran = f4.get(key, (0.0, False))
            counts[f4_bin(value)] += 1
            executed += ran
        n = len(keys)
        out[group] = {"pages": n, "executed": executed, "counts": counts,
                      "shares": {b: (c / n if n else None) for b, c in counts.items()}}
    return out


def format_distribution(dist: dict[str, dict[str, Any]], first: str) -> str:
    headers = [first, "Pages", "Executed", *BINS]
    rows = []
    for group, d in dist.items():
        cells = [f"{d['counts'][b]} ({100 * d['shares'][b]:.1f}%)" if d["pages"] else "0" for b in BINS]
        rows.append([group, d["pages"], d["executed"], *cells])
    return md_table(headers, rows)


def run(argv: Optional[list[str]] = None) -> dict[str, Any]:
    args = base_parser("python -m experiments.table6", __doc__.split("\n\n")[0]).parse_args(argv)
    setup = prepare(args)
    bench = ensure_bench(setup)
    config = pipeline_config(setup.config, bench, args.devices)
    run_pipeline(bench, setup.run_dir, config)
    labels = read_page_labels(bench)
    qrels = bench_qrels(bench)
    f4 = page_f4(setup.run_dir)
    missing = [k for k in labels if k not in f4]
    if missing:
        from verirank_core.errors import StoreError

        raise StoreError(f"{len(missing)} benchmark pages have no execution record in {setup.run_dir} "
                         f"(e.g. {missing[0]}); the run is incomplete: run the experiment again to resume")

    by_group: dict[str, list] = {g: [] for g in GROUPS}
    by_variant: dict[str, list] = {}
    by_label: dict[str, list] = {"Relevant (qrels)": [], "Not relevant (qrels)": []}
    for key, label in labels.items():
        by_group[instruction_group(label)].append(key)
        variant = label["variant"] + ("_with_steps" if label.get("bait_with_steps") else "")
        by_variant.setdefault(variant, []).append(key)
        relevant = qrels.get(key[0], {}).get(key[1], 0) > 0
        by_label["Relevant (qrels)" if relevant else "Not relevant (qrels)"].append(key)

    groups = distribution(by_group, f4)
    variants = distribution(dict(sorted(by_variant.items())), f4)
    relevance = distribution(by_label, f4)
    nop = groups[NO_OR_PARTIAL]
    share_one = nop["shares"]["F4 = 1"]
    executed_nop = [k for k in by_group[NO_OR_PARTIAL] if f4[k][1]]
    share_one_executed = (sum(1 for k in executed_nop if f4[k][0] >= 1.0) / len(executed_nop)
                          if executed_nop else None)
    facts = run_facts(setup, bench)
    markdown = "\n".join([
        f"# Table 6: F4 for pages with and without full instructions ({facts['benchmark']['name']})",
        "",
        f"Judge `{facts['judge']}`, predictor `{facts['predictor']}`. F4 = 0 for pages that were never executed "
        "(no steps extracted). Groups come from the benchmark's page variants (labels, evaluation only).",
        "",
        format_distribution(groups, "Group"),
        f"**No or partial instructions scored F4 = 1: {_pct(share_one)} of all such pages"
        f" ({_pct(share_one_executed)} of those executed).** The paper's judge: about 25%.",
        "",
        "## By page variant",
        "",
        format_distribution(variants, "Variant"),
        "## By relevance label (qrels: the page's steps reach the goal when replayed)",
        "",
        format_distribution(relevance, "Label"),
        f"Code: {facts['code']}; {facts['date']}.",
        "",
    ])
    data = {"experiment": NAME, "size": setup.size, **facts, "bins": list(BINS), "groups": groups,
            "variants": variants, "relevance": relevance,
            "no_or_partial_f4_1_share": share_one, "no_or_partial_f4_1_share_executed": share_one_executed}
    with tracked(setup, NAME) as tracker:
        tracker.metrics({"no_or_partial_f4_1_share": share_one,
                         "no_or_partial_f4_1_share_executed": share_one_executed,
                         "full_f4_1_share": groups[FULL]["shares"]["F4 = 1"]})
        paths = write_result(setup, NAME, markdown, {**data, "mlflow_run_id": tracker.run_id})
        tracker.artifacts(list(paths.values()))
    return {**data, "paths": paths}


def _pct(x: Optional[float]) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


main = entry_point(run)

if __name__ == "__main__":
    raise SystemExit(main())
