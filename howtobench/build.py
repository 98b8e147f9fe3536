"""``verirank howtobench build``: worlds + task definitions -> a HowToBench directory.

Output layout (``OUT``, default ``datasets/howtobench/build``)::

    OUT/queries.jsonl         one Query per query (+ ``world``, ``app`` = package, ``device``)
    OUT/serp.jsonl            the original ranking (SearchResult rows, 20 per query)
    OUT/qrels.txt             TREC qrels, every page judged (1 = replay reaches the goal)
    OUT/site/HOST/PATH        the static How-to site (see howtobench.site)
    OUT/pages.jsonl           every page as already fetched (Page rows; bodies in cache/pages)
    OUT/cache/pages/...       the run page cache, pre-filled, so `verirank extract OUT` needs no network
    OUT/labels/pages.jsonl    HIDDEN sidecar: style, variant, gold actions, replay of every page
    OUT/labels/queries.jsonl  HIDDEN sidecar: task id, goal and split of every query
    OUT/stats.md, stats.json  the Table 3-style statistics
    OUT/howtobench.json       build summary: seed, sizes, rank/relevance correlation

The same seed gives byte-identical files. The ``labels/`` folder and
``qrels.txt`` are for labelling and evaluation only; the pipeline reads
queries, serp and pages.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from phonesim.world import World, load_world
from extraction.pagecache import PageCache
from verirank_core.extraction_records import FetchStatus, Page, Query
from howtobench.pages import PagePlan, plan_pages, render_page
from howtobench.qrels import ReplayCache, write_qrels
from howtobench.replay import replay
from howtobench.serp import rank_pages, rank_relevance_correlation, serp_records
from howtobench.site import write_page
from howtobench.stats import compute_stats, format_stats_markdown
from howtobench.tasks import TASKS_DIR, Task, gold_actions, load_tasks
from verirank_core.errors import SchemaError
from verirank_core.resources import FULL_BENCH, SMALL_BENCH
from verirank_core.stages import Progress
from verirank_core.store import atomic_write_json, atomic_write_text, write_jsonl

__all__ = ["DEFAULT_OUT", "SMALL_DIR", "SMALL_WORLDS", "BuildReport", "build_benchmark", "query_id",
           "check_task", "select_queries"]

DEFAULT_OUT = FULL_BENCH
#: the committed --small subset the demo and tests use
SMALL_DIR = SMALL_BENCH
#: --small: 3 tasks x 1 phrasing on each of these worlds, 10 pages per query
SMALL_WORLDS = ("oneui5-settings", "browser-app", "clock-app", "keyboard-app")
SMALL_TASKS_PER_WORLD = 3
FULL_PAGES, SMALL_PAGES = 20, 10
#: output entries the builder owns (removed before a rebuild so nothing stale survives)
_MANAGED = ("queries.jsonl", "serp.jsonl", "pages.jsonl", "qrels.txt", "site", "cache", "labels", "stats.md", "stats.json",
            "howtobench.json")


@dataclass
class BuildReport:
    out: Path
    queries: int = 0
    pages: int = 0
    relevant: int = 0
    replays: int = 0
    correlation: dict = field(default_factory=dict)


def query_id(task: Task, query: str) -> str:
    """An opaque, stable qid: the same query gets the same id in the full build and --small."""
    return "htb-" + hashlib.sha1(f"{task.id}\n{query}".encode("utf-8")).hexdigest()[:10]


def check_task(task: Task, world: World) -> None:
    """A task must be well-posed: goal false at the start, true after its correct path."""
    if task.goal not in world.goals:
        raise SchemaError(f"task {task.id!r}: world {world.name!r} has no goal {task.goal!r} "
                          f"(goals: {', '.join(world.goals)})")
    result = replay(world, task.goal, gold_actions(task))
    if result.held_at_start:
        raise SchemaError(f"task {task.id!r}: goal {task.goal!r} already holds before any action")
    if not result.reached:
        where = f" (stuck at step {result.failed_at}: {result.reason})" if result.failed_at is not None else ""
        raise SchemaError(f"task {task.id!r}: its correct path does not reach goal {task.goal!r}{where}")


def select_queries(tasks: list[Task], small: bool) -> list[tuple[Task, str]]:
    """(task, phrasing) pairs: every phrasing, or for --small the first phrasing of a few tasks."""
    if not small:
        return [(t, q) for t in tasks for q in t.queries]
    out = []
    for world in SMALL_WORLDS:
        chosen = [t for t in tasks if t.world == world][:SMALL_TASKS_PER_WORLD]
        out += [(t, t.queries[0]) for t in chosen]
    return out


def _device_name(world: World) -> str:
    d = world.device
    return f"{d.manufacturer} {d.model}, Android {d.os_version}"


def build_benchmark(
    out: Path | str = DEFAULT_OUT,
    *,
    small: bool = False,
    seed: int = 0,
    tasks_dir: Path | str = TASKS_DIR,
    pages_per_query: Optional[int] = None,
    progress: Optional[Progress] = None,
) -> BuildReport:
    """Build HowToBench (test split) into ``out``; see the module docstring for the layout."""
    out = Path(out)
    tasks = load_tasks(tasks_dir, split="test")
    worlds: dict[str, World] = {}
    for task in tasks:
        if task.world not in worlds:
            worlds[task.world] = load_world(task.world)
        check_task(task, worlds[task.world])
    n_pages = pages_per_query or (SMALL_PAGES if small else FULL_PAGES)
    selected = select_queries(tasks, small)

    for name in _MANAGED:
        target = out / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    out.mkdir(parents=True, exist_ok=True)

    cache = PageCache(out / "cache" / "pages")
    judge = ReplayCache()
    queries, serp, fetched, qrels_rows, page_labels, query_labels = [], [], [], [], [], []
    items = progress(selected, total=len(selected), desc="bench build", unit="query") if progress else selected
    for task, text in items:
        world = worlds[task.world]
        qid = query_id(task, text)
        queries.append(Query(qid=qid, query=text, app=world.app.package, device=_device_name(world),
                             world=task.world))
        # task.world is the name the device pool opens (imported worlds live under imported/)
        query_labels.append({"qid": qid, "task": task.id, "goal": task.goal, "world": task.world,
                             "split": task.split, "domain": task.domain})
        plans = plan_pages(task, qid, text, n_pages, seed)
        ranked = rank_pages(plans, seed)
        for rank, plan in enumerate(ranked, start=1):
            verdict = judge.judge(world, task.goal, plan.gold)
            grade = int(verdict.reached and not verdict.held_at_start)
            body = render_page(plan).encode("utf-8")
            write_page(out / "site", plan.url, body)
            sha = cache.put(body)
            meta = {"content_type": "text/html; charset=utf-8", "encoding": "utf-8", "final_url": plan.url,
                    "http_status": 200, "truncated": False}
            cache.remember(plan.url, sha, meta)
            fetched.append(Page(qid=qid, url=plan.url, rank=rank, title=plan.title, status=FetchStatus.OK,
                                n_bytes=len(body), body_sha256=sha, from_cache=True,
                                **{k: v for k, v in meta.items() if k != "truncated"}))
            qrels_rows.append((qid, plan.url, grade))
            page_labels.append(_page_label(plan, rank, grade, verdict.to_json(), sha))
        serp += serp_records(ranked)

    write_jsonl(out / "queries.jsonl", queries)
    write_jsonl(out / "serp.jsonl", serp)
    write_jsonl(out / "pages.jsonl", fetched)
    write_qrels(out / "qrels.txt", qrels_rows)
    _write_json_lines(out / "labels" / "pages.jsonl", page_labels)
    _write_json_lines(out / "labels" / "queries.jsonl", query_labels)

    qrels = {}
    for qid, url, grade in qrels_rows:
        qrels.setdefault(qid, {})[url] = grade
    correlation = rank_relevance_correlation(serp, qrels)
    stats = compute_stats(out)
    atomic_write_json(out / "stats.json", stats)
    atomic_write_text(out / "stats.md", format_stats_markdown(stats))
    summary = {
        "name": "HowToBench" + (" (small)" if small else ""), "seed": seed, "small": small,
        "pages_per_query": n_pages, "queries": len(queries), "pages": len(page_labels),
        "relevant": sum(g for _, _, g in qrels_rows), "worlds": sorted({t.world for t, _ in selected}),
        "tasks": len({t.id for t, _ in selected}), "rank_relevance": correlation,
    }
    atomic_write_json(out / "howtobench.json", summary)
    return BuildReport(out=out, queries=len(queries), pages=len(page_labels), relevant=summary["relevant"],
                       replays=judge.replays, correlation=correlation)


def _page_label(plan: PagePlan, rank: int, grade: int, verdict: dict, sha: str) -> dict:
    data = plan.to_json()
    return {
        "qid": plan.qid, "url": plan.url, "rank": rank, "relevant": grade, "style": plan.style,
        "variant": plan.variant, "bait_with_steps": plan.bait_with_steps, "platform": plan.platform,
        "has_steps": bool(plan.steps), "steps": [s.replace("«", "").replace("»", "") for s in plan.steps],
        "gold": data["gold"], "replay": verdict, "body_sha256": sha,
    }


def _write_json_lines(path: Path, rows: list[dict]) -> None:
    import json

    atomic_write_text(path, "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
