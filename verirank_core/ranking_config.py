"""Settings of stage 3 (features, verified rule, models, MLflow, export)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


#: the 18 execution features of the paper (defined in ranking/FEATURES.md)
PAPER_FEATURES: tuple[str, ...] = tuple(f"F{i}" for i in range(1, 19))
#: optional features beyond the paper (platform_match / device_match: the page's stated platform and maker)
EXTRA_FEATURES: tuple[str, ...] = ("n_deviations_norm", "n_repairs_norm", "platform_match", "device_match")
ALL_FEATURES: tuple[str, ...] = PAPER_FEATURES + EXTRA_FEATURES


class FeatureConfig(_Section):
    """Which features ``verirank features`` computes, and how (see ranking/FEATURES.md)."""

    #: feature columns, in this order (also the svmlight column order)
    names: list[str] = Field(default_factory=lambda: list(PAPER_FEATURES))
    #: F2 page-query relevance: MiniLM cosine ("embedding") or an LLM score ("llm", uses the llm section)
    relevance: Literal["embedding", "llm"] = "embedding"
    #: keyword list for F3; None = the bundled datasets/keywords/mobile_ui_keywords.txt
    keywords_path: str | None = None

    @field_validator("names")
    @classmethod
    def _known_names(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in ALL_FEATURES]
        if unknown:
            raise ValueError(f"unknown feature(s) {unknown}; valid names: {', '.join(ALL_FEATURES)}")
        if len(set(names)) != len(names):
            raise ValueError("feature names must not repeat")
        if not names:
            raise ValueError("at least one feature is needed")
        return names


class VerifiedRuleConfig(_Section):
    """When a page counts as verified (see ranking/verified.py)."""

    #: rule name: "threshold" (the limits below) or "completed" (threshold + the
    #: agent acted on every instruction step)
    rule: Literal["threshold", "completed"] = "threshold"
    #: F4 must be strictly greater than this
    min_f4: float = Field(0.0, ge=0.0, le=1.0)
    #: at least this many actions executed
    min_actions: int = Field(1, ge=0)
    #: the page must have an ExecutionResult with status "executed"
    require_execution: bool = True


class RerankConfig(_Section):
    """How ``verirank rerank`` orders a result list (see ranking/rerank.py)."""

    #: "verified-first": verified pages by model score, then the others in original order;
    #: "score": every page by model score (plain learning-to-rank)
    order: Literal["verified-first", "score"] = "verified-first"
    #: run tag written in the last column of TREC run files
    tag: str = "verirank"


class TrainConfig(_Section):
    """How ``verirank train`` fits a model (see docs/ranking-models.md)."""

    #: share of training queries held out for early stopping when no --valid file is given (0 = none)
    valid_frac: float = Field(0.2, ge=0.0, lt=1.0)
    #: TMLP passes over the training data
    epochs: int = Field(20, ge=1)
    #: relevance column of a features.parquet used as training data
    label_column: str = "label"
    #: CPU threads for torch and LightGBM (fixed, so results repeat)
    num_threads: int = Field(1, ge=1, le=64)
    #: extra hyperparameters of the chosen model, e.g. {n_estimators: 200} (names checked at train time)
    params: dict[str, object] = Field(default_factory=dict)


class EvalConfig(_Section):
    """How ``verirank evaluate`` scores runs (see ranking/metrics.py)."""

    metrics: list[str] = Field(default_factory=lambda: ["MRR", "P@1", "P@5", "NDCG@5", "NDCG@10"])
    #: NDCG gain: "linear" (grade, trec_eval/ir_measures) or "exp" (2^grade - 1, LightGBM/allRank)
    gain: Literal["linear", "exp"] = "linear"
    #: random sign flips of the permutation test (exact enumeration up to 16 differing queries)
    n_resamples: int = Field(10_000, ge=100)


class RankingConfig(_Section):
    model: Literal["lr", "tmlp-lambdaloss", "tmlp-neuralndcg", "lambdamart"] = "lr"
    seed: int = 42
    tracking_uri: str = "sqlite:///mlflow.db"
    experiment: str = "verirank"
    features: FeatureConfig = FeatureConfig()
    verified: VerifiedRuleConfig = VerifiedRuleConfig()
    rerank: RerankConfig = RerankConfig()
    train: TrainConfig = TrainConfig()
    evaluate: EvalConfig = EvalConfig()
