"""`verirank farm`: phones on several hosts as one pool of devices, on Ray (docs/farm.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from typing import Optional

import typer

from verirank.commands._common import fail, friendly_errors

farm_app = typer.Typer(
    name="farm",
    help=("A device farm across hosts: each host's Ray node advertises the phones plugged into it, and "
          "`verirank run --devices farm --set execution.ray_address=HEAD:6379` runs every page on them."),
    no_args_is_help=True,
)


def _ray_cli() -> list[str]:
    found = shutil.which("ray") or shutil.which("ray", path=os.path.dirname(sys.executable))
    return [found] if found else [sys.executable, "-m", "ray.scripts.scripts"]


@farm_app.command("node")
@friendly_errors
def node_cmd(
    address: Optional[str] = typer.Option(None, "--address",
                                          help="The head node's HOST:PORT; without it this host starts the head."),
    device: Optional[list[str]] = typer.Option(None, "--device", "-d",
                                               help="A device to advertise (adb:SERIAL); repeat it. Default: "
                                                    "every online device of this host's adb server."),
    adb_port: Optional[int] = typer.Option(None, "--adb-port",
                                           help="This host's adb server port (default: $ANDROID_ADB_SERVER_PORT, "
                                                "else 5037). The node's workers use it."),
    print_only: bool = typer.Option(False, "--print", help="Print the `ray start` command instead of running it."),
    ray_args: Optional[list[str]] = typer.Argument(None, help="More `ray start` options, after `--`."),
) -> None:
    """Start this host's Ray node, advertising its phones as resources named by their device spec.

    Examples:

      verirank farm node                                  # the head, with every phone adb sees here

      verirank farm node --address 10.0.0.5:6379          # another host joins with its own phones

      verirank farm node --address 10.0.0.5:6379 -d adb:R5CN30ABCDE -- --num-cpus 2
    """
    from execution.farm import discover_adb_devices, node_resources, ray_start_command

    specs = list(device or []) or discover_adb_devices(port=adb_port)
    if not specs:
        raise fail("this host's adb server sees no online device: plug a phone in (`adb devices`), or pass --device")
    try:
        node_resources(specs)
    except ValueError as exc:
        raise fail(str(exc)) from None
    command = ray_start_command(specs, address, ray_args or [])
    command[0:1] = _ray_cli()
    env = dict(os.environ)
    if adb_port is not None:
        env["ANDROID_ADB_SERVER_PORT"] = str(adb_port)  # the node's workers inherit it
    typer.echo(f"advertising {len(specs)} device(s): {', '.join(specs)}")
    typer.echo(" ".join(command))
    if print_only:
        return
    done = subprocess.run(command, env=env)
    if done.returncode != 0:
        raise fail(f"`ray start` exited with {done.returncode}", code=done.returncode)


@farm_app.command("devices")
@friendly_errors
def devices_cmd(
    address: str = typer.Option("auto", "--address", help="The cluster to ask (default: the one on this host)."),
) -> None:
    """List the devices the cluster's nodes advertise: what `--devices farm` will run on."""
    import ray

    from execution.farm import advertised_devices

    ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    try:
        specs = advertised_devices()
    finally:
        ray.shutdown()
    if not specs:
        raise fail("no node advertises a device: start each host's node with `verirank farm node`")
    for spec in specs:
        typer.echo(spec)


def register(app: typer.Typer) -> None:
    app.add_typer(farm_app, name="farm")
