"""Settings of stage 2 (devices, agent, judge, safety, executors)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ExecutionConfig(_Section):
    #: device specs: ``sim:WORLD`` (a world name or file) or ``adb:SERIAL``
    devices: list[str] = Field(default_factory=lambda: ["sim:android13-settings"])
    predictor: Literal["heuristic", "llm"] = "heuristic"
    judge: Literal["heuristic", "llm"] = "heuristic"
    max_steps: int = Field(28, ge=1, le=200)
    executor: Literal["threads", "ray"] = "threads"
