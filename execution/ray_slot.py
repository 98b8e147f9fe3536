"""The ``ray`` executor: a device slot in a Ray actor (for users who outgrow one machine).

Like a worker process, the actor builds its own
:class:`~execution.slots.DeviceSlot` from the config alone.
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any, Optional

from verirank_core.config import RunConfig
from verirank_core.errors import DeviceError, ExecutionError
from execution.jobs import Job, PageOutput, run_vectors
from execution.farm import advertised_devices, gone, placement
from execution.slots import OneAtATime, build_slot

__all__ = ["RaySlot"]


class _RayActor:
    """A device slot inside a Ray actor, built from the config like a worker process."""

    def __init__(self, config_json: dict, run_dir: str):
        config = RunConfig.model_validate(config_json)
        self.slot = build_slot(config, run_dir)
        self.vectors = ExitStack()
        self.vectors.enter_context(run_vectors(config, run_dir))

    def run(self, job: Job, spec: str) -> PageOutput:
        return self.slot.run(job, spec)

    def close(self) -> None:
        self.slot.close()
        self.vectors.close()


class RaySlot(OneAtATime):
    """A device slot in a Ray actor; the actor is started on the first page and after it died.

    A device a farm node advertises (execution/farm.py) gets its actor on that node.
    When that node leaves the cluster the slot is :meth:`retired`: the pool stops
    feeding it, and its pages go to the devices that are left.
    """

    def __init__(self, config: RunConfig, run_dir: Path, cpus: float):
        import ray

        super().__init__()
        self.ray = ray
        self.config_json = config.to_manifest()
        self.run_dir = str(run_dir)
        self.cpus = cpus
        #: the actor's handle (a Ray ActorHandle), None until the first page
        self.actor: Optional[Any] = None
        #: the actor is pinned to the node that advertises its device
        self.pinned = False
        self._retired = False

    def _start(self, spec: str, live: list[str]) -> Any:
        options = placement(spec, dict.fromkeys(live, 1))
        self.pinned = bool(options)
        options = {"num_cpus": self.cpus, "max_restarts": 0, **options}
        return self.ray.remote(**options)(_RayActor).remote(self.config_json, self.run_dir)

    def run(self, job: Job, spec: str) -> PageOutput:
        from ray.exceptions import RayActorError, RayTaskError

        if self.actor is None:
            # on a farm a device runs on its own node or not at all: never wait for a resource that
            # left with its node, and never reach a phone from another host
            live = advertised_devices()  # asked once: each question is a round trip to the cluster
            if spec not in live and (self.pinned or live):
                self._retired = True
                raise DeviceError(f"{spec}: no node of the farm advertises it (any more)")
            self.actor = self._start(spec, live)
        try:
            return self.ray.get(self.actor.run.remote(job, spec))
        except RayTaskError as exc:
            cause = getattr(exc, "cause", None)
            if isinstance(cause, DeviceError):
                raise DeviceError(str(cause)) from None
            raise ExecutionError(f"a Ray worker failed on {job.url}: {exc}") from None
        except RayActorError as exc:  # the actor's process died, or its node left
            self.actor = None
            self._retired = gone(spec, self.pinned, wait=15.0)
            raise DeviceError(f"{spec}: the Ray actor died: {str(exc).splitlines()[0]}") from None

    def retired(self) -> bool:
        return self._retired

    def close(self) -> None:
        if self.actor is not None:
            try:
                self.ray.get(self.actor.close.remote(), timeout=30)
            except Exception:
                pass
            self.ray.kill(self.actor)
            self.actor = None
