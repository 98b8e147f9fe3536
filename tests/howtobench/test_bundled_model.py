"""The bundled pre-trained ranker matches the agent, judge and feature code it was built with."""

from __future__ import annotations

import json
import re
import shutil

import pandas as pd

from howtobench.bundled_model import (
    FEATURES_DIR,
    FINGERPRINT_FILES,
    MODEL_DIR,
    anonymise_url,
    fingerprint,
    stale_reasons,
    stored_fingerprint,
)

#: candidate kinds of the pre-training generator: a URL naming one hints at the label
KIND_RE = re.compile(r"(positive|swapped|modified|deleted|other_task|outdated)-\d", re.IGNORECASE)


def test_bundled_model_is_not_stale():
    reasons = stale_reasons()
    assert not reasons, ("the bundled ranker was built with other agent/judge/feature code; run "
                         "`python -m howtobench.bundled_model rebuild`:\n" + "\n".join(reasons))


def test_fingerprint_covers_agent_judge_and_features(repo_root):
    files = fingerprint()["files"]
    for name in ("execution/agent.py", "execution/judge.py", "execution/predict/heuristic.py",
                 "execution/predict/steps.py", "ranking/features.py"):
        assert name in files
    assert any(n.startswith("execution/knowledge/") for n in files)
    assert any(n.startswith("datasets/knowledge/") for n in files)
    assert len(FINGERPRINT_FILES) >= 10


def test_fingerprint_changes_when_the_judge_changes(repo_root, tmp_path):
    for pattern in FINGERPRINT_FILES:
        for src in repo_root.glob(pattern):
            dst = tmp_path / src.relative_to(repo_root)
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, dst)
    before = fingerprint(tmp_path)
    assert before["files"] == fingerprint(repo_root)["files"]
    judge = tmp_path / "execution" / "judge.py"
    judge.write_text(judge.read_text("utf-8") + "\n# a change\n", "utf-8")
    after = fingerprint(tmp_path)
    assert after["sha256"] != before["sha256"]
    assert after["files"]["execution/judge.py"] != before["files"]["execution/judge.py"]


def test_stored_fingerprint_is_written_with_the_model():
    stored = stored_fingerprint()
    assert stored is not None and len(stored["sha256"]) == 64
    assert (MODEL_DIR / "ranker.json").is_file()


def test_bundled_training_and_validation_data_name_no_candidate_kind():
    for split in ("train", "valid"):
        table = pd.read_parquet(FEATURES_DIR / split / "features.parquet")
        assert len(table) > 10
        assert not table["url"].str.contains(KIND_RE).any(), split
    trec = (MODEL_DIR / "valid.trec").read_text("utf-8")
    assert trec.strip() and not KIND_RE.search(trec)


def test_anonymised_urls_are_stable_and_opaque():
    url = "https://pretrain.howtobench.example/t/pt-1/positive-0"
    assert anonymise_url(url) == anonymise_url(url)
    assert "positive" not in anonymise_url(url) and anonymise_url(url) != anonymise_url(url + "x")
    assert json.dumps(anonymise_url(url))
