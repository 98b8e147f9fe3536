"""A device farm on Ray: phones plugged into several hosts, one stage 2 (docs/farm.md).

Each host runs a Ray node that advertises its devices as custom resources named
by their device spec, one unit each: ``{"adb:R5CN30ABCDE": 1}``. The node's own
adb server (its ``ANDROID_ADB_SERVER_PORT``, 5037 by default) reaches them, so a
serial means the phone plugged into that host.

The driver asks the cluster which devices it advertises (:func:`advertised_devices`)
when ``execution.devices`` is ``[farm]``, and the Ray executor places each
device's actor on the node that advertises it (:func:`placement`). A device whose
node left the cluster is :func:`gone`: its slot retires, and its pages go to the
devices that are left.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Iterable, Mapping, Optional

from verirank_core.errors import ExecutionError

if TYPE_CHECKING:
    from verirank_core.config import RunConfig

__all__ = ["FARM", "init_ray", "farm_config", "DEVICE_PREFIXES", "is_farm", "advertised_devices", "placement", "gone", "node_resources",
           "discover_adb_devices", "ray_start_command"]

#: ``execution.devices: [farm]``: every device the Ray cluster advertises
FARM = "farm"
#: resource names that are device specs (what a node may advertise)
DEVICE_PREFIXES = ("adb:",)


def is_farm(devices: Iterable[str]) -> bool:
    return list(devices) == [FARM]


def init_ray(config: "RunConfig") -> None:
    """Join ``execution.ray_address``, else start a local Ray with ``execution.ray_num_cpus``."""
    import ray

    if not ray.is_initialized():
        if config.execution.ray_address:
            ray.init(address=config.execution.ray_address, ignore_reinit_error=True)
        else:
            # "local" starts a Ray of our own: without it, ray.init joins whatever cluster another
            # process on this machine started last, and then refuses num_cpus
            ray.init(address="local", num_cpus=config.execution.ray_num_cpus, include_dashboard=False,
                     ignore_reinit_error=True, log_to_driver=False)


def farm_config(config: "RunConfig") -> "RunConfig":
    """``execution.devices: [farm]`` made concrete: the devices the Ray cluster advertises, on the Ray executor.

    Any other device list is returned as it is.
    """
    if not is_farm(config.execution.devices):
        return config
    if config.execution.executor not in ("auto", "ray"):
        raise ExecutionError(f"execution.devices=[farm] runs on the Ray executor, not {config.execution.executor!r}")
    init_ray(config)
    specs = advertised_devices()
    if not specs:
        where = config.execution.ray_address or "a local Ray"
        raise ExecutionError(f"no node of {where} advertises a device: start each host's node with "
                             "`verirank farm node --address HEAD` (docs/farm.md)")
    execution = config.execution.model_copy(update={"devices": specs, "executor": "ray"})
    return config.model_copy(update={"execution": execution})


def _device_resources(resources: Mapping[str, float]) -> list[str]:
    return sorted(name for name, units in resources.items() if name.startswith(DEVICE_PREFIXES) and units >= 1)


def _live_resources() -> dict[str, float]:
    """The resources of the nodes alive now (``ray.nodes()`` notices a lost node before the totals do)."""
    import ray

    out: dict[str, float] = {}
    for node in ray.nodes():
        if node.get("Alive"):
            for name, units in node.get("Resources", {}).items():
                out[name] = out.get(name, 0.0) + units
    return out


def advertised_devices(resources: Optional[Mapping[str, float]] = None) -> list[str]:
    """The device specs the cluster's live nodes advertise, sorted."""
    return _device_resources(_live_resources() if resources is None else resources)


def placement(spec: str, resources: Optional[Mapping[str, float]] = None) -> dict:
    """Ray actor options for a device slot: pinned to the node advertising ``spec`` when one does.

    A device on a node needs no CPU reservation: a phone waits on I/O, and a host with
    two cores may hold eight phones. A device no node advertises runs where Ray likes.
    """
    if spec in advertised_devices(resources):
        return {"num_cpus": 0, "resources": {spec: 1}}
    return {}


def gone(spec: str, pinned: bool, wait: float = 0.0) -> bool:
    """True when a pinned device is no longer advertised: its node left the cluster.

    ``wait``: seconds to keep asking, for a caller whose actor just died (the cluster
    notices a lost node a moment after the actor's caller does).
    """
    if not pinned:
        return False
    deadline = time.monotonic() + wait
    while spec in advertised_devices():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.5)
    return True


def node_resources(specs: Iterable[str]) -> dict[str, int]:
    """The ``--resources`` a node advertises for its devices."""
    out: dict[str, int] = {}
    for spec in specs:
        if not spec.startswith(DEVICE_PREFIXES):
            raise ValueError(f"{spec!r} is not a device a farm node can advertise (expected adb:SERIAL)")
        out[spec] = 1
    return out


def discover_adb_devices(host: Optional[str] = None, port: Optional[int] = None) -> list[str]:
    """``adb:SERIAL`` for every online device of this host's adb server (started if needed)."""
    from execution.adb_server import adb_client, ensure_adb_server, server_address

    host, port = server_address(host, port)
    ensure_adb_server(host, port)
    client = adb_client(host, port)
    return sorted(f"adb:{d.serial}" for d in client.device_list())


def ray_start_command(specs: Iterable[str], address: Optional[str], extra: Iterable[str] = ()) -> list[str]:
    """``ray start`` for a node that advertises ``specs``: the head when ``address`` is None."""
    where = ["--address", address] if address else ["--head"]
    return ["ray", "start", *where, "--resources", json.dumps(node_resources(specs), sort_keys=True), *extra]
