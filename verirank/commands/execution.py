"""`verirank execute`: stage 2 over a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, resolve_config, run_one


@friendly_errors
def execute(
    run_dir: Path = typer.Argument(..., help="Run directory holding extraction.jsonl (from `verirank extract`)."),
    devices: Optional[str] = typer.Option(
        None, "--devices", "-d",
        help="Comma-separated device specs: sim:WORLD (bundled world name or world file) or "
             "adb:SERIAL (a phone, an emulator, or 127.0.0.1:PORT from `verirank sim serve`). "
             "Repeat a spec to run several devices of the same kind in parallel. `farm`: every phone "
             "the nodes of a Ray farm advertise (docs/farm.md).",
    ),
    executor: Optional[str] = typer.Option(
        None, help="auto (default: a process per device for several sim: devices and at least "
                   "execution.process_min_pages pages, else threads), threads, processes or ray."),
    predictor: Optional[str] = typer.Option(None, help="Action predictor: heuristic (default) or llm."),
    judge: Optional[str] = typer.Option(None, help="Judge for F4: heuristic (default) or llm."),
    max_steps: Optional[int] = typer.Option(None, help="Stop a trajectory after this many actions (default 28)."),
    no_reuse: bool = typer.Option(
        False, "--no-reuse", help="Run every page on a device, even one whose verdict an earlier run stored "
                                  "(execution.reuse=false); the new verdicts are stored."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Run every extracted page's steps on a device and judge how far they got.

    Reads DIR/extraction.jsonl; writes DIR/execution.jsonl (one record per page) and
    DIR/trajectories.jsonl, and the screens it saw in DIR/screens/
    (one file per distinct dump or screenshot, shared by the pages).
    Re-running resumes: finished pages are skipped. A page verified by an earlier run, with the
    same steps, device model, Android and app version, agent and judge, takes its stored verdict
    and runs on no device (execution.verdict_cache; --no-reuse runs it again).

    Examples:

      verirank execute runs/demo --devices sim:android13-settings,sim:android13-settings

      verirank execute runs/mine --devices adb:emulator-5554 --set execution.reset=pm-clear
    """
    from execution.stage import ExecuteStage

    flags = {
        "execution.devices": [d.strip() for d in devices.split(",") if d.strip()] if devices else None,
        "execution.executor": executor,
        "execution.predictor": predictor,
        "execution.judge": judge,
        "execution.max_steps": max_steps,
        "execution.reuse": False if no_reuse else None,
    }
    cfg = resolve_config(config, set_, flags)
    counts = run_one(run_dir, cfg, ExecuteStage())
    typer.echo("execute: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))
    typer.echo(f"wrote {run_dir / 'execution.jsonl'}")


def register(app: typer.Typer) -> None:
    app.command("execute", help=execute.__doc__)(execute)
