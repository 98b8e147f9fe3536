"""The demo's pure helpers: query selection, the terminal table, option checks."""

from __future__ import annotations

import pytest

from verirank_core.extraction_records import Query
from verirank_core.config import load_config
from verirank.demo import (
    DemoOptions, demo_config, format_summary, model_label, reset_outputs, run_demo, select_queries,
)
from verirank_core.errors import ConfigError, StoreError


def _queries(worlds: list[str]) -> list[Query]:
    return [Query(qid=f"q{i}", query=f"question {i}", world=w) for i, w in enumerate(worlds)]


def test_select_queries_spreads_over_worlds_and_keeps_file_order():
    queries = _queries(["a", "a", "a", "b", "b", "c"])
    picked = select_queries(queries, 4)
    assert [q.qid for q in picked] == ["q0", "q1", "q3", "q5"]
    assert select_queries(queries, None) == queries
    assert select_queries(queries, 99) == queries
    with pytest.raises(ConfigError, match="at least 1"):
        select_queries(queries, 0)


def _summary():
    def row(system, mrr, p=None):
        return {"system": system, "mean": {"MRR": mrr, "P@1": mrr / 2, "P@5": 0.2, "NDCG@5": mrr},
                "p_permutation": {} if p is None else {"MRR": p, "P@1": 0.5, "P@5": 1.0, "NDCG@5": 0.01}}
    return {"metrics": ["MRR", "P@1", "P@5", "NDCG@5"], "n_queries": 12, "n_answerable": 10,
            "rows": [row("Oracle", 0.9, 0.001), row("Original order", 0.3), row("LR", 0.6, 0.2)]}


def test_format_summary_has_one_row_per_system_and_marks_significance():
    text = format_summary(_summary())
    lines = text.splitlines()
    assert lines[0].split()[:5] == ["system", "MRR", "P@1", "P@5", "NDCG@5"]
    oracle = next(line for line in lines if line.startswith("Oracle"))
    original = next(line for line in lines if line.startswith("Original order"))
    lr = next(line for line in lines if line.startswith("LR"))
    assert "0.9000*" in oracle and oracle.rstrip().endswith("0.0010")
    assert "*" not in original and original.rstrip().endswith("–")
    assert "0.6000 " in lr and "0.6000*" in lr  # MRR not significant, NDCG@5 (p=0.01) is
    assert "12 queries (10 with a relevant page)" in lines[-1]


def test_model_label():
    assert model_label("lr") == "LR"
    assert model_label("lambdamart") == "LambdaMART"
    assert model_label("custom") == "custom"


def test_bad_options_fail_before_any_work(tmp_path):
    with pytest.raises(ConfigError, match="--devices"):
        run_demo(DemoOptions(out=tmp_path / "out", devices=0), load_config())
    assert not (tmp_path / "out").exists()


def test_reset_refuses_folders_that_are_not_demo_runs(tmp_path):
    (tmp_path / "precious.txt").write_text("keep me")
    with pytest.raises(StoreError, match="not a demo folder"):
        reset_outputs(tmp_path)
    assert (tmp_path / "precious.txt").read_text() == "keep me"
    demo = tmp_path / "demo"
    demo.mkdir()
    (demo / "manifest.json").write_text('{"stages": [{"stage": "inputs", "pipeline": "demo"}]}')
    reset_outputs(demo)
    assert not demo.exists()


def test_the_demo_config_is_resolved_before_any_stage_runs(demo_data, tmp_path):
    """Everything the demo changes is in the config the runner logs: no stage rewrites it afterwards."""
    base = load_config()
    cfg = demo_config(DemoOptions(out=tmp_path / "out", data=demo_data, devices=3, report=False), base)
    assert cfg.execution.route_by_world and len(cfg.execution.devices) == 3
    assert all(d.startswith("sim:") for d in cfg.execution.devices)
    assert cfg.execution.screenshots == base.execution.screenshots  # no report: no extra screenshots
    assert cfg.extraction.fetch.cache_dir == str((demo_data / "cache" / "pages").resolve())
    with_report = demo_config(DemoOptions(out=tmp_path / "out", data=demo_data, report=True), base)
    assert with_report.execution.screenshots == "every_step"
    assert base.execution.devices != cfg.execution.devices and not (tmp_path / "out").exists()
