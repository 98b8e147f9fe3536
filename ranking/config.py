"""Settings of stage 3 (features, verified rule, models, MLflow, export)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RankingConfig(_Section):
    model: Literal["lr", "tmlp-lambdaloss", "tmlp-neuralndcg", "lambdamart"] = "lr"
    seed: int = 42
    tracking_uri: str = "sqlite:///mlflow.db"
    experiment: str = "verirank"
