"""datasets/real-dev2 to real-dev7: the sets of real texts labelled on the OnePlus app are what their READMEs say."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.real_dev_pages import load_texts
from benchmarks.real_text import split_steps
from experiments.real_dev_eval import load_pages

DATASETS = Path(__file__).resolve().parents[2] / "datasets"
#: (folder, texts, tasks, working texts), as each README's table gives them
SETS = [("real-dev2", 89, 12, 5), ("real-dev3", 62, 8, 2), ("real-dev4", 64, 8, 4), ("real-dev5", 64, 8, 7),
        ("real-dev6", 32, 4, 4), ("real-dev7", 30, 4, 1)]


def _rows(folder: str, name: str) -> list[dict]:
    return [json.loads(line) for line in (DATASETS / folder / name).read_text("utf-8").splitlines() if line.strip()]


def _subsequence(part: list[str], whole: list[str]) -> bool:
    rest = iter(whole)
    return all(any(s == w for w in rest) for s in part)


@pytest.mark.parametrize("folder", [s[0] for s in SETS])
def test_every_text_is_a_crawled_line_split_as_the_benchmarks_split_it(shared_dir, folder):
    crawl = (shared_dir / "real-text" / "crawled_instructions.jsonl").read_text("utf-8").splitlines()
    real_dev = {json.loads(line)["text_line"] for line in (shared_dir / "real-dev" / "pages.jsonl").read_text().splitlines()}
    names = [s[0] for s in SETS]
    earlier = {p["text_line"] for f in names[:names.index(folder)] for p in _rows(f, "pages.jsonl")}
    for p in _rows(folder, "pages.jsonl"):
        line = json.loads(crawl[p["text_line"]])
        assert (p["text"], p["source_url"]) == (line["instructions"], line["url"]), p["pid"]
        assert p["sentences"] == split_steps(p["text"]), p["pid"]
        assert p["text_line"] not in real_dev, f"{p['pid']} is a real-dev text"
        assert p["text_line"] not in earlier, f"{p['pid']} is in an earlier set"


@pytest.mark.parametrize("folder, n_texts", [(s[0], s[1]) for s in SETS])
def test_labels_are_sentences_of_their_text_and_agree_with_the_qrels(folder, n_texts):
    qrels = {line.split()[2]: int(line.split()[3]) for line in (DATASETS / folder / "qrels.txt").read_text().splitlines()}
    pages = _rows(folder, "pages.jsonl")
    assert len(pages) == len(qrels) == n_texts
    for p in pages:
        # labelled steps are sentences of the text, in its order (a crawled text may repeat one)
        assert _subsequence(p["steps"], p["sentences"]), p["pid"]
        assert qrels[p["pid"]] == int(p["works_on_device"])
        assert not p["works_on_device"] or p["steps"], f"{p['pid']} works without steps"
        assert bool(p["steps"]) == p["has_instructions"] or p["variant"] == "goal_partial", p["pid"]


@pytest.mark.parametrize("folder", [s[0] for s in SETS])
def test_goal_keys_are_controls_of_the_real_app(shared_dir, folder):
    xml = " ".join(f.read_text("utf-8", errors="replace")
                   for f in (shared_dir / "apps" / "oneplus-settings-android11" / "res" / "xml").glob("*.xml"))
    world = json.loads((DATASETS / "worlds" / "imported" / "oneplus-settings-android11.json").read_text("utf-8"))
    # rows the app adds in code (AOSP's "Add account"), which the imported world builds and sources
    built = {node["id"].rsplit(".", 1)[-1] for screen in world["screens"] if "built" in screen.get("source", "")
             for node in screen.get("nodes", [])}
    for task in _rows(folder, "tasks.jsonl"):
        for key in task["goal_keys"]:
            # a switch bar drawn from a layout has no preference key: real-dev names them virtual_*
            assert key.startswith("virtual_") or f'android:key="{key}"' in xml or key in built, (task["qid"], key)


@pytest.mark.parametrize("folder, n_texts, n_tasks, n_working", SETS)
def test_the_benchmarks_read_it_like_real_dev(folder, n_texts, n_tasks, n_working):
    texts = load_texts(DATASETS / folder)
    assert len(texts) == n_texts and len({t.query for t in texts}) == n_tasks
    pages = load_pages(DATASETS / folder)
    assert sum(p["works"] for p in pages) == n_working
    # a text without labelled steps hands on all its sentences
    assert all(p["steps"] for p in pages)
