"""The bundled pre-trained ranker (``datasets/models/``): rebuild it with one command, know when it is stale.

    python -m howtobench.bundled_model rebuild     # pre-training set -> features -> LR -> fingerprint
    python -m howtobench.bundled_model check       # exit 1 when the code changed since the rebuild

The model's features come from real executions, so a change to the agent, the judge, the
step parser, the matcher, the knowledge cards or the feature code changes them. The
**fingerprint** (``datasets/models/lr-pretrain/fingerprint.json``) is the SHA-256 of those
source files (:data:`FINGERPRINT_FILES`) and of the default config sections they read
(``execution.agent``, ``execution.max_steps``, ``ranking.features``);
``tests/howtobench/test_bundled_model.py`` recomputes it and fails when it differs.

No ground truth in the bundled data: the pre-training set names candidate pages after
their kind (``.../positive-0``, ``.../deleted-2``), which says how a page was made and so
hints at its label. The copies under ``datasets/models/`` replace every URL by an opaque
hash of it, in the features and in ``valid.trec``; the label column stays (it is what the
validation measures against), nothing else derived from the goals does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Optional

from verirank_core.json_types import JSONObject
from verirank_core.resources import BUNDLED_MODEL, PRETRAIN_FEATURES

__all__ = ["FINGERPRINT_FILES", "fingerprint", "stored_fingerprint", "rebuild", "anonymise_url", "MODEL_DIR",
           "FEATURES_DIR"]

#: the checkout whose source files the fingerprint hashes (rebuilding the model is a developer task)
ROOT = Path(__file__).resolve().parents[1]
MODEL_DIR = BUNDLED_MODEL
FEATURES_DIR = PRETRAIN_FEATURES
FINGERPRINT_NAME = "fingerprint.json"

#: source files whose behaviour shapes the pre-training features (globs, relative to the repo root)
FINGERPRINT_FILES: tuple[str, ...] = (
    "execution/agent.py", "execution/judge.py", "execution/goal.py", "execution/goal_check.py",
    "execution/proxy.py", "execution/distill.py",
    "execution/uicontext.py", "execution/uitree.py", "execution/safety.py", "execution/predict/*.py",
    "execution/knowledge/*.py", "datasets/knowledge/*.json", "ranking/features.py", "ranking/terms.py",
    "howtobench/pretrain.py",
)


def _files(root: Path = ROOT) -> list[Path]:
    out: list[Path] = []
    for pattern in FINGERPRINT_FILES:
        hits = sorted(root.glob(pattern))
        out += [p for p in hits if p.is_file()]
    return out


def _config_sections() -> JSONObject:
    from verirank_core.config import load_config

    cfg = load_config()
    return {"execution.agent": cfg.execution.agent.model_dump(mode="json"),
            "execution.max_steps": cfg.execution.max_steps,
            "ranking.features": cfg.ranking.features.model_dump(mode="json")}


def fingerprint(root: Path = ROOT) -> JSONObject:
    """Hashes of the code and config the bundled features depend on (and their combination)."""
    files = {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in _files(root)}
    config = _config_sections()
    config_hash = hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest()
    combined = hashlib.sha256(json.dumps({"files": files, "config": config_hash}, sort_keys=True).encode())
    return {"sha256": combined.hexdigest(), "files": files, "config_sha256": config_hash}


def stored_fingerprint(model_dir: Path = MODEL_DIR) -> Optional[JSONObject]:
    path = Path(model_dir) / FINGERPRINT_NAME
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def stale_reasons(model_dir: Path = MODEL_DIR) -> list[str]:
    """Why the bundled model no longer matches the code (empty: it matches)."""
    stored = stored_fingerprint(model_dir)
    if stored is None:
        return [f"{Path(model_dir) / FINGERPRINT_NAME} is missing"]
    now = fingerprint()
    if stored.get("sha256") == now["sha256"]:
        return []
    reasons = []
    old, new = stored.get("files", {}), now["files"]
    for name in sorted(set(old) | set(new)):
        if old.get(name) != new.get(name):
            reasons.append(f"{name} {'added' if name not in old else 'removed' if name not in new else 'changed'}")
    if stored.get("config_sha256") != now["config_sha256"]:
        reasons.append("config sections execution.agent / execution.max_steps / ranking.features changed")
    return reasons or ["fingerprint differs"]


def anonymise_url(url: str) -> str:
    """An opaque, stable id for a pre-training page (its URL names the candidate kind)."""
    return f"https://pretrain.howtobench.example/page/{hashlib.sha256(url.encode()).hexdigest()[:16]}"


def _copy_features(src: Path, dst: Path) -> None:
    import pandas as pd

    table = pd.read_parquet(src)
    table["url"] = table["url"].map(anonymise_url)
    dst.parent.mkdir(parents=True, exist_ok=True)
    table.to_parquet(dst, index=False)


def rebuild(work: Optional[Path] = None, seed: int = 0) -> JSONObject:
    """Pre-training set -> bundled features (anonymised) -> LR ranker -> fingerprint."""
    from ranking.experiment import train as run_training
    from howtobench.pretrain import build_pretrain
    from verirank_core.config import load_config

    config = load_config()
    config.execution.save_screens = False
    tmp = Path(work) if work else Path(tempfile.mkdtemp(prefix="verirank-pretrain-"))
    out = tmp / "pretrain"
    if out.exists():
        shutil.rmtree(out)
    summary = build_pretrain(out, config, seed=seed)
    for split in ("train", "valid"):
        _copy_features(out / split / "features.parquet", FEATURES_DIR / split / "features.parquet")
    shutil.copy(out / "pretrain_stats.md", FEATURES_DIR / "pretrain_stats.md")
    if MODEL_DIR.exists():
        shutil.rmtree(MODEL_DIR)
    rc = config.ranking
    outcome = run_training(FEATURES_DIR / "train" / "features.parquet", "lr", MODEL_DIR,
                           train_cfg=rc.train, eval_cfg=rc.evaluate, seed=rc.seed,
                           valid_path=FEATURES_DIR / "valid" / "features.parquet",
                           config=config.to_manifest(), tracking_uri=None)
    fp = fingerprint()
    (MODEL_DIR / FINGERPRINT_NAME).write_text(json.dumps(fp, indent=2, sort_keys=True) + "\n", "utf-8")
    if not work:
        shutil.rmtree(tmp, ignore_errors=True)
    valid = outcome.valid.mean if outcome.valid is not None else {}
    return {"features": summary.get("features"), "valid": valid, "fingerprint": fp["sha256"]}


def main(argv: Optional[list[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m howtobench.bundled_model", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("rebuild", help="rebuild datasets/models/ (about a minute of CPU)")
    r.add_argument("--work", type=Path, default=None, help="keep the pre-training run here")
    r.add_argument("--seed", type=int, default=0)
    sub.add_parser("check", help="exit 1 when the bundled model is stale")
    args = ap.parse_args(argv)
    # the settings `verirank` sets for the libraries (howtobench does not import the CLI)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if args.cmd == "rebuild":
        print(json.dumps(rebuild(args.work, args.seed), indent=2))
        return 0
    reasons = stale_reasons()
    if reasons:
        print("the bundled model is stale; run `python -m howtobench.bundled_model rebuild`:\n  "
              + "\n  ".join(reasons))
        return 1
    print("the bundled model matches the code")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
