"""HowToBench: deterministic build, realistic pages, replay-checked qrels, a blind original order."""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path

import lxml.html
import pytest

from phonesim.world import load_world
from verirank_core.extraction_records import Page, Query, SearchResult
from howtobench.build import SMALL_DIR, build_benchmark, check_task, query_id, select_queries
from howtobench.pages import STYLES, VARIANTS, plan_pages
from howtobench.qrels import ReplayCache
from ranking.metrics import read_qrels
from howtobench.replay import replay
from howtobench.serp import rank_pages, rank_relevance_correlation, serp_records
from howtobench.site import SiteServer, site_path
from howtobench.stats import compute_stats
from howtobench.tasks import Step, Task, load_task_file, load_tasks
from verirank_core.errors import SchemaError, StoreError
from verirank_core.store import read_jsonl


def _tree_digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("htb") / "small"
    build_benchmark(out, small=True, seed=0)
    return out


def _labels(build: Path) -> list[dict]:
    return [json.loads(line) for line in (build / "labels" / "pages.jsonl").read_text("utf-8").splitlines()]


def test_same_seed_gives_byte_identical_output(small, tmp_path):
    again = tmp_path / "again"
    build_benchmark(again, small=True, seed=0)
    assert _tree_digest(small) == _tree_digest(again)
    other = tmp_path / "other"
    build_benchmark(other, small=True, seed=1)
    assert (other / "serp.jsonl").read_bytes() != (small / "serp.jsonl").read_bytes()


def test_committed_small_subset_is_current(small):
    # the demo reads datasets/howtobench/small: it must be what the code builds today
    assert _tree_digest(SMALL_DIR) == _tree_digest(small)


def test_small_subset_shape_and_records(small):
    queries = read_jsonl(small / "queries.jsonl", Query)
    serp = read_jsonl(small / "serp.jsonl", SearchResult)
    pages = read_jsonl(small / "pages.jsonl", Page)
    assert len(queries) == 12 and len({q.qid for q in queries}) == 12
    assert len({q.model_extra["world"] for q in queries}) == 4
    for q in queries:
        world = load_world(q.model_extra["world"])  # routable to sim:<world>
        assert q.app == world.app.package
    assert len(serp) == 120 and all(1 <= r.rank <= 10 for r in serp)
    assert {(p.qid, p.url) for p in pages} == {(r.qid, r.url) for r in serp}
    assert all(p.usable and p.body_sha256 for p in pages)


def test_every_page_parses_and_hides_its_labels(small):
    labels = _labels(small)
    assert {p["style"] for p in labels} == set(STYLES)
    assert {p["variant"] for p in labels} == set(VARIANTS)
    for p in labels:
        raw = (small / "site" / site_path(p["url"])).read_bytes()
        assert hashlib.sha256(raw).hexdigest() == p["body_sha256"]
        doc = lxml.html.fromstring(raw)
        assert doc.findtext(".//title")
        text = doc.text_content()
        assert len(text) > 300
        # the sidecar's facts never leak into the HTML
        assert p["variant"] not in raw.decode() or p["variant"] in ("correct",)
        assert "gold" not in raw.decode() and "howtobench" not in raw.decode().lower()
        for step in p["steps"]:  # every instruction is visible on the page
            words = step.split()
            assert all(w.strip('.,"') in text for w in words[:2])


def test_qrels_match_fresh_replays_and_goals_start_false(small):
    qrels = read_qrels(small / "qrels.txt")
    qmeta = {q["qid"]: q for q in map(json.loads, (small / "labels" / "queries.jsonl").read_text().splitlines())}
    worlds = {}
    assert sum(len(v) for v in qrels.values()) == 120
    n_rel = 0
    for p in _labels(small):
        meta = qmeta[p["qid"]]
        world = worlds.setdefault(meta["world"], load_world(meta["world"]))
        result = replay(world, meta["goal"], [Step.model_validate(s) for s in p["gold"]])
        assert not result.held_at_start
        assert qrels[p["qid"]][p["url"]] == int(result.reached) == p["relevant"]
        if p["variant"] in ("no_steps", "partial", "other_platform") or (p["variant"] == "bait" and not p["bait_with_steps"]):
            assert p["relevant"] == 0, p["url"]
        if p["variant"] in ("correct", "paraphrased") or p["bait_with_steps"]:
            assert p["relevant"] == 1, p["url"]
        n_rel += p["relevant"]
    assert 12 <= n_rel < 60  # every query has a relevant page, most pages are not relevant
    assert all(any(v.values()) for v in qrels.values())


def test_an_outdated_path_that_still_works_is_labelled_relevant():
    # Chrome 60's path names "Advanced", which is only a section header today: tapping it
    # does nothing and the rest of the path still works. The label comes from the replay.
    task = next(t for t in load_tasks() if t.id == "browser-search-engine")
    world = load_world(task.world)
    from howtobench.tasks import gold_actions

    assert replay(world, task.goal, gold_actions(task, task.outdated[0].path)).reached
    assert not replay(world, task.goal, gold_actions(task, task.other_platforms[0].path)).reached


def test_original_order_is_not_correlated_with_relevance():
    """Pooled over the full benchmark (planned in memory, no HTML written)."""
    tasks = load_tasks(split="test")
    worlds = {t.world: load_world(t.world) for t in tasks}
    judge = ReplayCache()
    serp, qrels = [], {}
    for task, text in select_queries(tasks, small=False):
        qid = query_id(task, text)
        ranked = rank_pages(plan_pages(task, qid, text, 20, seed=0), seed=0)
        serp += serp_records(ranked)
        for p in ranked:
            verdict = judge.judge(worlds[task.world], task.goal, p.gold)
            qrels.setdefault(qid, {})[p.url] = int(verdict.reached and not verdict.held_at_start)
    c = rank_relevance_correlation(serp, qrels)
    assert c["queries"] >= 150 and c["pages"] == 20 * c["queries"]
    assert 0.04 < c["base_rate"] < 0.2
    assert abs(c["spearman_rho"]) < 0.1 and abs(c["kendall_tau"]) < 0.1
    assert abs(c["p_at_1"] - c["random_p_at_1"]) < 0.1


def test_stats_table_counts_match_files(small):
    s = compute_stats(small)
    assert s["total"]["queries"] == 12 and s["total"]["pages"] == 120
    assert s["total"]["relevant"] == sum(sum(v.values()) for v in read_qrels(small / "qrels.txt").values())
    assert s["total"]["pages_with_instructions"] == sum(p["has_steps"] for p in _labels(small))
    assert "| **Total** |" in (small / "stats.md").read_text()
    with pytest.raises(StoreError, match="HowToBench build"):
        compute_stats(small / "nowhere")


def test_site_server_serves_pages_on_loopback(small):
    first = read_jsonl(small / "serp.jsonl", SearchResult)[0]
    with SiteServer(small / "site") as server:
        assert server.base_url.startswith("http://127.0.0.1:")
        body = urllib.request.urlopen(server.url_for(first.url), timeout=5).read()
        assert body == (small / "site" / site_path(first.url)).read_bytes()
        index = urllib.request.urlopen(server.base_url + "/", timeout=5).read().decode()
        assert "120 pages" in index
        for bad in ("/nohost.example/x", "/support.phonecare.example/../../qrels.txt"):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(server.base_url + bad, timeout=5)
            assert err.value.code == 404


def test_bad_task_definitions_are_clear_errors(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("world: clock-app\ndomain: Clock\napp_name: Clock\nplatform: x\n"
                   "tasks:\n  - {id: t1, goal: week_monday, topic: t, queries: [a], path: [{toggle: ''}]}\n")
    with pytest.raises(SchemaError, match=r"bad.yaml.*tasks.0.path.0"):
        load_task_file(bad)
    world = load_world("clock-app")
    wrong = Task(id="t2", goal="week_monday", topic="t", queries=["q"], path=[Step(op="tap", label="Alarm")],
                 world="clock-app", app_name="Clock")
    with pytest.raises(SchemaError, match="does not reach goal"):
        check_task(wrong, world)
    missing = wrong.model_copy(update={"goal": "no_such_goal"})
    with pytest.raises(SchemaError, match="has no goal 'no_such_goal'"):
        check_task(missing, world)
