"""``verirank howtobench pretrain``: a synthetic pre-training set built the way the paper built
"How-to META-GUI" from META-GUI, but from simulator worlds.

Split (disjoint from the HowToBench test split): only tasks marked
``split: pretrain`` in ``datasets/howtobench/tasks/`` are used. They have
their own goals and their own query phrasings, and their pages live on their
own host (``pretrain.howtobench.example``); ``tests/howtobench`` checks that no
query text, URL or instruction list is shared with the test split.

For every query (a phrasing of a pretrain task) the builder writes candidate
"pages", each an instruction list generated from an action sequence:

====================  ================================================================
``positive``          the task's correct path, plainly worded
``swapped``           the correct path as written for another phrasing of the same
                      task (the paper's "similar queries of the same app swapped in")
``modified``          the correct path with one action replaced by another label of
                      the same screen
``deleted``           the correct path with one action removed
``other_task``        the correct path of another task of the same app (it fails here)
``outdated``          an older version's path, when the task has one
====================  ================================================================

The instructions are then executed by the pipeline's own stages and runner
(``execution.stage.ExecuteStage``: agent + judge on ``sim:<world>``, then
``ranking.pipeline.FeaturesStage`` with the labels), so trajectories, F4 and
features come from the same code as in the pipeline. The label of every
candidate is decided by replaying its action sequence (``howtobench.replay``),
never assumed from its kind. The feature table is split into train/valid by query.

Output (``OUT``)::

    queries.jsonl extraction.jsonl execution.jsonl trajectories.jsonl   like a pipeline run
    qrels.txt                      replay labels
    labels/candidates.jsonl        HIDDEN: kind, action sequence, replay of every candidate
    features.parquet features.svmlight features.qids.tsv   all rows, with labels
    train/ valid/                  the same three files per split (split by query)
    pretrain_stats.md pretrain_stats.json   Table 4-style summary
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from phonesim.layout import walk
from phonesim.simulator import Simulator
from phonesim.world import World, load_world
from verirank_core.config import RunConfig
from verirank_core.extraction_records import Extraction, ExtractionStatus, GroundedStep, Query
from howtobench.qrels import ReplayCache, write_qrels
from howtobench.replay import Replayer
from howtobench.tasks import TASKS_DIR, Step, Task, gold_actions, load_tasks
from howtobench.wording import render_steps
from verirank_core.errors import SchemaError
from verirank_core.json_types import JSONObject
from verirank_core.resources import FULL_BENCH
from verirank_core.stages import Progress
from verirank_core.store import RunDir, atomic_write_json, atomic_write_text, write_jsonl

__all__ = ["PRETRAIN_HOST", "DEFAULT_PRETRAIN_OUT", "Candidate", "plan_candidates", "sequences_of_test_split", "build_pretrain",
           "pretrain_stats", "format_pretrain_stats", "instruction_hash"]

PRETRAIN_HOST = "pretrain.howtobench.example"
DEFAULT_PRETRAIN_OUT = FULL_BENCH / "pretrain"
KINDS = ("positive", "swapped", "modified", "deleted", "other_task", "outdated")


@dataclass
class Candidate:
    qid: str
    query: str
    task: str
    world: str
    kind: str
    url: str
    instructions: list[str]
    actions: list[Step]
    relevant: int = 0
    replay: dict = field(default_factory=dict)


def instruction_hash(steps: list[str]) -> str:
    """Content hash of an instruction list (whitespace- and case-insensitive)."""
    norm = "\n".join(" ".join(s.replace("«", "").replace("»", "").split()).lower() for s in steps)
    return hashlib.sha256(norm.encode("utf-8")).hexdigest()


def _qid(task: Task, query: str) -> str:
    return "pt-" + hashlib.sha1(f"{task.id}\n{query}".encode("utf-8")).hexdigest()[:10]


def _screen_labels(world: World, prefix: list[Step]) -> list[str]:
    """Texts of clickable controls on the screen reached after ``prefix`` (for 'modified')."""
    sim = Simulator(world)
    sim.reset()
    player = Replayer(sim)
    for i, step in enumerate(prefix):
        if player.perform(step, i) is not None:
            break
    labels = []
    for node in walk(sim.window().root):
        if node.text and node.enabled and node.resource_id in ("android:id/title", "android:id/text1", ""):
            if node.cls.endswith(("TextView", "CheckedTextView", "Button")) and len(node.text) > 1:
                labels.append(node.text)
    return sorted(set(labels))


def _clean(steps: list[str]) -> list[str]:
    return [s.replace("«", "").replace("»", "") for s in steps]


def sequences_of_test_split(test_tasks: list[Task]) -> set[tuple[str, ...]]:
    """Every action sequence a test-split page can carry (correct, alternative paths and their prefixes)."""
    seqs: set[tuple[str, ...]] = set()
    for t in test_tasks:
        for alt in [None, *t.outdated, *t.other_platforms]:
            full = gold_actions(t, alt.path, alt.app) if alt else gold_actions(t)
            for end in range(1, len(full) + 1):
                seqs.add(tuple(s.short() for s in full[:end]))
    return seqs


def plan_candidates(tasks: list[Task], worlds: dict[str, World], seed: int,
                    exclude: frozenset = frozenset()) -> list[Candidate]:
    """Every candidate of every query of the pretrain ``tasks`` (labels not yet set).

    Candidates whose action sequence is in ``exclude`` (see :func:`sequences_of_test_split`)
    are dropped, so no pretrain page repeats a test page's instructions.
    """
    out: list[Candidate] = []
    by_world: dict[str, list[Task]] = {}
    for t in tasks:
        by_world.setdefault(t.world, []).append(t)
    for task in tasks:
        world = worlds[task.world]
        correct = gold_actions(task)
        for j, query in enumerate(task.queries):
            rng = random.Random(f"pretrain:{seed}:{task.id}:{j}")
            qid = _qid(task, query)
            made: list[tuple[str, list[Step], str]] = [
                ("positive", correct, "plain"),
                ("swapped", correct, "paraphrased"),
            ]
            for _ in range(2):
                i = rng.randrange(1, len(correct))
                choices = [lab for lab in _screen_labels(world, correct[:i]) if lab != correct[i].label]
                if choices:
                    changed = Step(op="tap", label=rng.choice(choices))
                    made.append(("modified", correct[:i] + [changed] + correct[i + 1:], "plain"))
            i = rng.randrange(1, len(correct))
            made.append(("deleted", correct[:i] + correct[i + 1:], rng.choice(["plain", "paraphrased"])))
            others = [t for t in by_world[task.world] if t.id != task.id]
            if others:
                made.append(("other_task", gold_actions(rng.choice(others)), "plain"))
            for alt in task.outdated[:1]:
                made.append(("outdated", gold_actions(task, alt.path, alt.app), "plain"))
            made = [m for m in made if tuple(s.short() for s in m[1]) not in exclude]
            for n, (kind, actions, register) in enumerate(made):
                steps = _clean(render_steps(actions, register, rng))
                out.append(Candidate(qid=qid, query=query, task=task.id, world=task.world, kind=kind,
                                     url=f"https://{PRETRAIN_HOST}/{task.id}/{qid}/{kind}-{n}",
                                     instructions=steps, actions=actions))
    return out


def _split_of(qid: str, valid_fraction: float) -> str:
    h = int(hashlib.sha1(qid.encode("utf-8")).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "valid" if h < valid_fraction else "train"


def build_pretrain(
    out: Path | str = DEFAULT_PRETRAIN_OUT,
    config: Optional[RunConfig] = None,
    *,
    seed: int = 0,
    tasks_dir: Path | str = TASKS_DIR,
    valid_fraction: float = 0.2,
    features: bool = True,
    max_tasks: Optional[int] = None,
    progress: Optional[Progress] = None,
) -> JSONObject:
    """Write the pre-training run directory (see the module docstring); returns the summary."""
    from verirank_core.config import load_config

    out = Path(out)
    if (out / "execution.jsonl").exists() or (out / "extraction.jsonl").exists():
        raise SchemaError(f"{out} already holds a run (extraction.jsonl/execution.jsonl); "
                          "choose a new --out directory or delete it first")
    config = config or load_config()
    tasks = load_tasks(tasks_dir, split="pretrain")
    if max_tasks is not None:
        tasks = tasks[:max_tasks]
    if not tasks:
        raise SchemaError(f"{tasks_dir}: no task has `split: pretrain`")
    worlds = {t.world: load_world(t.world) for t in tasks}
    exclude = frozenset(sequences_of_test_split(load_tasks(tasks_dir, split="test")))
    candidates = plan_candidates(tasks, worlds, seed, exclude)

    judge = ReplayCache()
    for c in candidates:
        verdict = judge.judge(worlds[c.world], next(t.goal for t in tasks if t.id == c.task), c.actions)
        c.relevant = int(verdict.reached and not verdict.held_at_start)
        c.replay = verdict.to_json()

    out.mkdir(parents=True, exist_ok=True)
    queries: dict[str, Query] = {}
    extractions = []
    rank_of: dict[str, int] = {}
    for c in candidates:
        world = worlds[c.world]
        queries.setdefault(c.qid, Query(qid=c.qid, query=c.query, app=world.app.package, world=world.name))
        rank_of[c.qid] = rank_of.get(c.qid, 0) + 1
        extractions.append(Extraction(
            qid=c.qid, url=c.url, rank=rank_of[c.qid], title=f"How to {c.query}", query=c.query,
            status=ExtractionStatus.OK, extractor="pretrain-generator", raw_steps=list(c.instructions),
            steps=[GroundedStep(index=i, text=s, origin="ungrounded") for i, s in enumerate(c.instructions)],
        ))
    write_jsonl(out / "queries.jsonl", queries.values())
    write_jsonl(out / "extraction.jsonl", extractions)
    write_qrels(out / "qrels.txt", [(c.qid, c.url, c.relevant) for c in candidates])
    atomic_write_text(out / "labels" / "candidates.jsonl", "".join(
        json.dumps({"qid": c.qid, "url": c.url, "task": c.task, "world": c.world, "kind": c.kind,
                    "relevant": c.relevant, "actions": [s.short() for s in c.actions], "replay": c.replay,
                    "instruction_hash": instruction_hash(c.instructions)}, sort_keys=True) + "\n"
        for c in candidates))

    # stage 2 for real: the agent runs the generated instructions on sim:<world>; then the
    # features, labelled from the replayed qrels, through the pipeline's own stages and runner
    from execution.stage import ExecuteStage
    from ranking.pipeline import FeaturesStage
    from verirank_core.stages import run_stages

    exec_cfg = config.model_copy(deep=True)
    exec_cfg.execution.devices = [f"sim:{tasks[0].world}"]
    exec_cfg.execution.route_by_world = True
    stages = [ExecuteStage()] + ([FeaturesStage(qrels=out / "qrels.txt")] if features else [])
    run_stages(RunDir(out), exec_cfg, stages, pipeline="pretrain", progress=progress, echo=lambda line: None)

    summary = pretrain_stats(candidates, worlds)
    if features:
        summary["features"] = _split_features(out, valid_fraction)
    atomic_write_json(out / "pretrain_stats.json", summary)
    atomic_write_text(out / "pretrain_stats.md", format_pretrain_stats(summary))
    return summary


def _split_features(out: Path, valid_fraction: float) -> dict[str, dict[str, int]]:
    """The labelled feature table of the run, split by query into OUT/train/ and OUT/valid/."""
    from ranking.features import write_feature_files
    from verirank_core.store import read_parquet

    table = read_parquet(out / "features.parquet")
    sizes = {}
    split = table["qid"].map(lambda q: _split_of(q, valid_fraction))
    for name in ("train", "valid"):
        part = table[split == name].reset_index(drop=True)
        (out / name).mkdir(exist_ok=True)
        write_feature_files(out / name, part)
        sizes[name] = {"queries": int(part["qid"].nunique()), "rows": int(len(part)),
                       "positives": int(part["label"].sum())}
    return sizes


def pretrain_stats(candidates: list[Candidate], worlds: dict[str, World]) -> JSONObject:
    """Table 4-style counts: queries, positives and negatives per app."""
    rows: dict[str, dict[str, object]] = {}
    kinds: dict[str, dict[str, int]] = {}
    for c in candidates:
        r = rows.setdefault(c.world, {"world": c.world, "app": worlds[c.world].app.label, "queries": set(),
                                      "positives": 0, "negatives": 0})
        r["queries"].add(c.qid)
        r["positives" if c.relevant else "negatives"] += 1
        k = kinds.setdefault(c.kind, {"candidates": 0, "positives": 0})
        k["candidates"] += 1
        k["positives"] += c.relevant
    table = [{**r, "queries": len(r["queries"])} for _, r in sorted(rows.items())]
    total = {k: sum(r[k] for r in table) for k in ("queries", "positives", "negatives")}
    return {"apps": table, "total": total, "kinds": dict(sorted(kinds.items()))}


def format_pretrain_stats(summary: JSONObject) -> str:
    lines = ["| World | App | Queries | Positives | Negatives |", "|---|---|---:|---:|---:|"]
    for r in summary["apps"]:
        lines.append(f"| {r['world']} | {r['app']} | {r['queries']} | {r['positives']} | {r['negatives']} |")
    t = summary["total"]
    lines.append(f"| **Total** | | **{t['queries']}** | **{t['positives']}** | **{t['negatives']}** |")
    lines += ["", "| Candidate kind | Candidates | Positives (by replay) |", "|---|---:|---:|"]
    lines += [f"| {k} | {v['candidates']} | {v['positives']} |" for k, v in summary["kinds"].items()]
    if "features" in summary:
        lines += ["", "| Split | Queries | Rows | Positives |", "|---|---:|---:|---:|"]
        lines += [f"| {k} | {v['queries']} | {v['rows']} | {v['positives']} |" for k, v in summary["features"].items()]
    return "\n".join(lines) + "\n"
