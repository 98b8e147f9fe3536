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
    #: attempts per page across devices when a device fails mid-trajectory
    max_attempts: int = Field(3, ge=1, le=20)
    #: keep per-step screenshots and XML dumps in the trajectory folders
    save_screens: bool = True
    #: route a page to ``sim:<world>`` when its query names a world (benchmarks)
    route_by_world: bool = True
    #: Ray executor: address of an existing cluster (None = local ``ray.init``)
    ray_address: str | None = None
    ray_num_cpus: int = Field(2, ge=1)
