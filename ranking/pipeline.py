"""Stage 3 as stages of a run: ``features`` and ``rerank``.

Like ``extraction/pipeline.py`` and ``execution/stage.py``, each stage is an
object called as ``stage(run, cfg, progress) -> counts`` by the one runner
(:func:`verirank_core.stages.run_stages`), which records it in ``manifest.json``::

    features.parquet, features.svmlight, features.qids.tsv   (FeaturesStage)
    reranked.jsonl, reranked.trec                           (RerankStage)
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Mapping, Optional, Union

from verirank_core.config import RunConfig
from verirank_core.json_types import JSONValue
from verirank_core.stages import Counts, Progress, digest
from verirank_core.store import RunDir

if TYPE_CHECKING:
    from ranking.models.base import Ranker

__all__ = ["FeaturesStage", "RerankStage", "FEATURE_FILES"]

#: what the features stage writes, by kind
FEATURE_FILES = {"parquet": "features.parquet", "svmlight": "features.svmlight", "qids": "features.qids.tsv"}

Qrels = Mapping[str, Mapping[str, int]]


class FeaturesStage:
    """``features``: F1-F18 and the verified flag of every (query, page).

    ``qrels`` (a TREC qrels file or a ``{qid: {url: grade}}`` mapping) adds a
    ``label`` column for training and evaluation; labels are joined after the
    features are computed, so they never enter a feature.
    """

    name = "features"
    append_only = False
    requires = ("extraction.jsonl", "execution.jsonl")

    def __init__(self, qrels: Union[Path, str, Qrels, None] = None):
        self.qrels = qrels

    def _labels(self) -> Optional[Qrels]:
        from ranking.metrics import read_qrels

        if self.qrels is None or isinstance(self.qrels, Mapping):
            return self.qrels
        return read_qrels(self.qrels)

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        # a qrels file may be written by an earlier stage of the same run: named here, read when the stage runs
        labels = self.qrels if self.qrels is None or isinstance(self.qrels, Mapping) else Path(self.qrels).name
        return digest({"features": digest(cfg.ranking.features), "verified": digest(cfg.ranking.verified),
                       "labels": labels if not isinstance(labels, Mapping) else _hash(labels)})

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from ranking.features import attach_labels, build_feature_table, write_feature_files

        labels = self._labels()
        table = build_feature_table(run.path, cfg, progress=progress)
        if labels is not None:
            table = attach_labels(table, labels)
        write_feature_files(run.path, table)
        counts: Counts = {
            "pages": len(table),
            "queries": int(table["qid"].nunique()),
            "verified": int(table["verified"].sum()),
        }
        if labels is not None:
            counts["labelled_relevant"] = int((table["label"] > 0).sum())
        return counts


def _hash(qrels: Qrels) -> str:
    import hashlib
    import json

    text = json.dumps({q: dict(d) for q, d in qrels.items()}, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class RerankStage:
    """``rerank``: verified pages first, ordered by a ranker's score.

    ``model`` is a saved model directory or an MLflow model URI; ``ranker`` a
    fitted ranker already in memory (it wins when both are given).
    """

    name = "rerank"
    append_only = False
    requires = ("features.parquet", "execution.jsonl")

    def __init__(self, model: Union[str, Path, None] = None, ranker: Optional[Ranker] = None):
        if model is None and ranker is None:
            raise ValueError("RerankStage needs a model path/URI or a fitted ranker")
        self.model, self.ranker = model, ranker

    def fingerprint(self, cfg: RunConfig) -> JSONValue:
        # a saved model is named, not hashed: a new model comes from an earlier stage that ran again
        model = getattr(self.ranker, "name", "") if self.model is None else str(self.model)
        if self.model is not None and ":/" not in str(self.model):  # a folder, not an MLflow URI
            model = Path(str(self.model)).name
        return digest({"verified": digest(cfg.ranking.verified), "rerank": digest(cfg.ranking.rerank),
                       "model": model})

    def __call__(self, run: RunDir, cfg: RunConfig, progress: Progress) -> Counts:
        from ranking.rerank import load_model, rerank_run

        ranker = self.ranker or load_model(str(self.model), tracking_uri=cfg.ranking.tracking_uri)
        items = rerank_run(run.path, cfg, ranker)
        counts: Counts = {
            "pages": len(items), "queries": len({it.qid for it in items}),
            "verified": sum(it.verified for it in items),
            "moved": sum(1 for it in items if it.rank != it.original_rank),
        }
        if self.model is not None:
            counts["model"] = str(self.model)
        return counts
