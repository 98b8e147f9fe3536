"""The real-dev measure: its pages follow render_plain.py's order, labels stay out of the run, the chain runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from experiments.real_dev_eval import load_pages, per_task, product_gap, run_chain
from verirank_core.config import load_config


@pytest.fixture(scope="module")
def dev(shared_dir):
    return shared_dir / "real-dev"


def test_pages_are_the_real_texts_in_the_rendered_order(dev, tmp_path):
    pages = load_pages(dev)
    assert len(pages) == 185 and sum(p["works"] for p in pages) == 21
    assert len({p["qid"] for p in pages}) == 20
    # the same seeded shuffle as the rendering the headline figure is measured on
    subprocess.run([sys.executable, str(dev / "render_plain.py"), str(tmp_path)], check=True, capture_output=True)
    serp = [json.loads(line) for line in (tmp_path / "serp.jsonl").read_text("utf-8").splitlines()]
    rendered = [(r["qid"], r["rank"], r["url"].rsplit("/", 1)[1].removesuffix(".html")) for r in serp]
    ours = [(p["qid"], p["rank"], p["doc"].split("-", 1)[1]) for p in pages]
    assert ours == rendered
    # a text without labelled steps hands on all its sentences, as the rendering does
    texts = {json.loads(line)["pid"]: json.loads(line) for line in (dev / "pages.jsonl").read_text().splitlines()}
    for p in pages:
        t = texts[p["doc"]]
        assert p["steps"] == (t["steps"] or t["sentences"])


def test_only_selects_tasks(dev):
    pages = load_pages(dev, {"dA01"})
    assert {p["qid"] for p in pages} == {"dA01"} and len(pages) == 10


def test_per_task_and_product_gap_count_from_the_rows():
    rows = [
        {"qid": "q", "doc": "a", "rank": 1, "works": False, "f4": 1.0, "reranked": 2},
        {"qid": "q", "doc": "b", "rank": 2, "works": True, "f4": 1.0, "reranked": 1},
        {"qid": "q", "doc": "c", "rank": 3, "works": True, "f4": 0.0, "reranked": 3},
    ]
    assert per_task(rows) == {"q": {"texts": 3, "working": 2, "verified": 2, "true_verified": 1}}
    assert product_gap(rows)["P@1"] == 1.0
    rows[0]["reranked"], rows[1]["reranked"] = 1, 2
    assert product_gap(rows)["P@1"] == 0.0


@pytest.mark.slow
def test_the_whole_chain_runs_on_one_task(dev, tmp_path):
    rows = run_chain(dev, tmp_path, load_config(), only={"dA01"})
    assert len(rows) == 10 and sum(r["works"] for r in rows) == 2
    assert all(0.0 <= r["f4"] <= 1.0 for r in rows)
    # every text went through stage 1 and has a row in the product's reranked list
    assert sorted(r["reranked"] for r in rows) == list(range(1, 11))
    # the run folder holds what the pipeline made, and never the labels
    run = tmp_path / "run"
    assert (run / "execution.jsonl").is_file() and (run / "reranked.jsonl").is_file()
    assert "works_on_device" not in (run / "extraction.jsonl").read_text("utf-8")
    assert "works_on_device" not in (run / "execution.jsonl").read_text("utf-8")
