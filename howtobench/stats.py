"""Statistics of a HowToBench build, like Table 3 of the MagicWand paper.

One row per (domain, app): queries, pages, pages with instructions, relevant
pages; then a total row. Also the page counts per style and per variant with
their share of relevant pages, which show that the labels follow the replays
rather than the variant names.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from verirank_core.errors import StoreError
from verirank_core.json_types import JSONObject

__all__ = ["compute_stats", "format_stats_markdown"]


def _read_lines(path: Path) -> list[dict]:
    if not path.exists():
        raise StoreError(f"{path} not found: is this a HowToBench build directory (verirank howtobench build)?")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def compute_stats(build_dir: Path | str) -> JSONObject:
    """Counts per app, per style and per variant, from a build's files."""
    build_dir = Path(build_dir)
    queries = {q["qid"]: q for q in _read_lines(build_dir / "labels" / "queries.jsonl")}
    pages = _read_lines(build_dir / "labels" / "pages.jsonl")
    app_of = {}
    for q in _read_lines(build_dir / "queries.jsonl"):
        app_of[q["qid"]] = (queries[q["qid"]]["domain"], q.get("world") or queries[q["qid"]]["world"], q.get("app") or "")
    rows: dict[tuple, Counter] = defaultdict(Counter)
    for qid, key in app_of.items():
        rows[key]["queries"] += 1
    by_style: dict[str, Counter] = defaultdict(Counter)
    by_variant: dict[str, Counter] = defaultdict(Counter)
    for p in pages:
        c = rows[app_of[p["qid"]]]
        c["pages"] += 1
        c["pages_with_instructions"] += int(p["has_steps"])
        c["relevant"] += int(p["relevant"])
        variant = p["variant"] + ("_with_steps" if p["variant"] == "bait" and p["bait_with_steps"] else "")
        for table, name in ((by_style, p["style"]), (by_variant, variant)):
            table[name]["pages"] += 1
            table[name]["relevant"] += int(p["relevant"])
    table = [{"domain": d, "world": w, "app": a, **{k: rows[(d, w, a)][k] for k in
             ("queries", "pages", "pages_with_instructions", "relevant")}} for (d, w, a) in sorted(rows)]
    total = {k: sum(r[k] for r in table) for k in ("queries", "pages", "pages_with_instructions", "relevant")}
    return {
        "apps": table, "total": total,
        "styles": {k: dict(v) for k, v in sorted(by_style.items())},
        "variants": {k: dict(v) for k, v in sorted(by_variant.items())},
    }


def format_stats_markdown(stats: JSONObject) -> str:
    lines = ["| Domain | World | App | Queries | Pages | Pages with instructions | Relevant pages |",
             "|---|---|---|---:|---:|---:|---:|"]
    for r in stats["apps"]:
        lines.append(f"| {r['domain']} | {r['world']} | {r['app']} | {r['queries']} | {r['pages']} | "
                     f"{r['pages_with_instructions']} | {r['relevant']} |")
    t = stats["total"]
    lines.append(f"| **Total** | | | **{t['queries']}** | **{t['pages']}** | **{t['pages_with_instructions']}** | "
                 f"**{t['relevant']}** |")
    lines += ["", "| Style | Pages | Relevant |", "|---|---:|---:|"]
    lines += [f"| {k} | {v.get('pages', 0)} | {v.get('relevant', 0)} |" for k, v in stats["styles"].items()]
    lines += ["", "| Variant | Pages | Relevant |", "|---|---:|---:|"]
    lines += [f"| {k} | {v.get('pages', 0)} | {v.get('relevant', 0)} |" for k, v in stats["variants"].items()]
    return "\n".join(lines) + "\n"
