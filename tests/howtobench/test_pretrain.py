"""The synthetic pre-training set: disjoint from the test split, executed by the real stage 2."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from verirank_core.execution_records import ExecutionResult
from phonesim.world import load_world
from howtobench.build import SMALL_DIR, query_id, select_queries
from howtobench.pages import plan_pages
from howtobench.pretrain import (
    PRETRAIN_HOST,
    build_pretrain,
    instruction_hash,
    plan_candidates,
    sequences_of_test_split,
)
from ranking.metrics import read_qrels
from howtobench.tasks import load_tasks
from verirank_core.config import load_config
from verirank_core.errors import SchemaError
from verirank_core.store import read_jsonl


def test_pretrain_candidates_share_nothing_with_the_test_split():
    pre = load_tasks(split="pretrain")
    test = load_tasks(split="test")
    assert pre and not {t.id for t in pre} & {t.id for t in test}
    assert not {t.goal + t.world for t in pre} & {t.goal + t.world for t in test}
    worlds = {t.world: load_world(t.world) for t in pre}
    unfiltered = plan_candidates(pre, worlds, seed=0)
    cands = plan_candidates(pre, worlds, seed=0, exclude=frozenset(sequences_of_test_split(test)))
    assert 0 < len(cands) < len(unfiltered)  # some generated negatives collide with test pages and are dropped
    test_queries, test_urls, test_hashes = set(), set(), set()
    for task, text in select_queries(test, small=False):
        test_queries.add(text.lower())
        for plan in plan_pages(task, query_id(task, text), text, 20, seed=0):
            test_urls.add(plan.url)
            if plan.steps:
                test_hashes.add(instruction_hash(plan.steps))
    assert not {c.query.lower() for c in cands} & test_queries
    assert not {c.url for c in cands} & test_urls
    assert all(c.url.startswith(f"https://{PRETRAIN_HOST}/") for c in cands)
    assert not {instruction_hash(c.instructions) for c in cands} & test_hashes
    # and nothing of the committed test pages either
    small_hashes = {json.loads(line)["body_sha256"] for line in (SMALL_DIR / "labels" / "pages.jsonl").open()}
    assert len(small_hashes) == 120


def test_pretrain_run_has_features_labels_and_a_query_split(tmp_path):
    cfg = load_config(overrides=[{"execution": {"save_screens": False}}])
    out = tmp_path / "pre"
    summary = build_pretrain(out, cfg, max_tasks=1, valid_fraction=0.34)
    execs = read_jsonl(out / "execution.jsonl", ExecutionResult)
    qrels = read_qrels(out / "qrels.txt")
    n = sum(len(v) for v in qrels.values())
    assert len(execs) == n and all(e.status.value == "executed" for e in execs)
    assert summary["total"]["positives"] + summary["total"]["negatives"] == n
    labels = [json.loads(line) for line in (out / "labels" / "candidates.jsonl").read_text().splitlines()]
    for c in labels:  # the replay, not the kind, decides; but the kinds behave as designed here
        assert c["relevant"] == int(c["replay"]["reached"])
        if c["kind"] in ("positive", "swapped"):
            assert c["relevant"] == 1
        if c["kind"] in ("deleted", "other_task"):
            assert c["relevant"] == 0
    table = pd.read_parquet(out / "features.parquet")
    assert len(table) == n and set(table["label"]) == {0, 1}
    # positives executed to completion score a higher mean F4 than negatives
    assert table.loc[table.label == 1, "F4"].mean() > table.loc[table.label == 0, "F4"].mean()
    train, valid = (pd.read_parquet(out / s / "features.parquet") for s in ("train", "valid"))
    assert len(train) + len(valid) == n and not set(train.qid) & set(valid.qid)
    assert (out / "train" / "features.svmlight").read_text().startswith(("0 qid:", "1 qid:"))
    with pytest.raises(SchemaError, match="already holds a run"):
        build_pretrain(out, cfg, max_tasks=1)
