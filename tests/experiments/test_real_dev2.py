"""datasets/real-dev2: the second set of real texts labelled on the OnePlus app is what its README says."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.real_dev_pages import load_texts
from benchmarks.real_text import split_steps
from experiments.real_dev_eval import load_pages

DEV2 = Path(__file__).resolve().parents[2] / "datasets" / "real-dev2"


def _rows(name: str) -> list[dict]:
    return [json.loads(line) for line in (DEV2 / name).read_text("utf-8").splitlines() if line.strip()]


def test_every_text_is_a_crawled_line_split_as_the_benchmarks_split_it(shared_dir):
    crawl = (shared_dir / "real-text" / "crawled_instructions.jsonl").read_text("utf-8").splitlines()
    real_dev = {json.loads(line)["text_line"] for line in (shared_dir / "real-dev" / "pages.jsonl").read_text().splitlines()}
    for p in _rows("pages.jsonl"):
        line = json.loads(crawl[p["text_line"]])
        assert (p["text"], p["source_url"]) == (line["instructions"], line["url"]), p["pid"]
        assert p["sentences"] == split_steps(p["text"]), p["pid"]
        assert p["text_line"] not in real_dev, f"{p['pid']} is a real-dev text"


def test_labels_are_sentences_of_their_text_and_agree_with_the_qrels():
    qrels = {line.split()[2]: int(line.split()[3]) for line in (DEV2 / "qrels.txt").read_text().splitlines()}
    pages = _rows("pages.jsonl")
    assert len(pages) == len(qrels) == 89
    for p in pages:
        positions = [p["sentences"].index(s) for s in p["steps"]]
        assert positions == sorted(positions), p["pid"]  # labelled steps keep the text's order
        assert qrels[p["pid"]] == int(p["works_on_device"])
        assert not p["works_on_device"] or p["steps"], f"{p['pid']} works without steps"
        assert bool(p["steps"]) == p["has_instructions"] or p["variant"] == "goal_partial", p["pid"]


def test_goal_keys_are_controls_of_the_real_app(shared_dir):
    xml = " ".join(f.read_text("utf-8", errors="replace")
                   for f in (shared_dir / "apps" / "oneplus-settings-android11" / "res" / "xml").glob("*.xml"))
    for task in _rows("tasks.jsonl"):
        for key in task["goal_keys"]:
            # a switch bar drawn from a layout has no preference key: real-dev names them virtual_*
            assert key.startswith("virtual_") or f'android:key="{key}"' in xml, (task["qid"], key)


def test_the_benchmarks_read_it_like_real_dev():
    texts = load_texts(DEV2)
    assert len(texts) == 89 and len({t.query for t in texts}) == 12
    pages = load_pages(DEV2)
    assert sum(p["works"] for p in pages) == 5
    # a text without labelled steps hands on all its sentences
    assert all(p["steps"] for p in pages)
