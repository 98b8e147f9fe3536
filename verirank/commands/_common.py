"""Options and helpers shared by every command."""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional, ParamSpec, TypeVar

import typer

from verirank_core.config import RunConfig, load_config, parse_override
from verirank_core.errors import VerirankError

if TYPE_CHECKING:
    from verirank_core.stages import Counts, Stage

ConfigOpt = typer.Option(
    None, "--config", "-c", help="YAML config file(s) merged over configs/default.yaml.",
    exists=False, dir_okay=False,
)
SetOpt = typer.Option(
    None, "--set", "-s",
    help="Override one setting, e.g. --set extraction.fetch.workers=4 (value is YAML). Repeatable.",
)


def setup_env() -> None:
    """Process-wide settings the libraries read at import time."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("MLFLOW_DISABLE_TELEMETRY", "true")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def resolve_config(
    config_files: Optional[list[Path]],
    sets: Optional[list[str]],
    flags: Optional[Mapping[str, object]] = None,
) -> RunConfig:
    """Defaults < YAML files < --set < dedicated flags (flags given as dotted keys)."""
    overrides = [parse_override(s) for s in sets or []]
    for dotted, value in (flags or {}).items():
        if value is None:
            continue
        node: object = value
        for part in reversed(dotted.split(".")):
            node = {part: node}
        overrides.append(node)
    return load_config(list(config_files or []), overrides)


def fail(message: str, code: int = 2) -> "typer.Exit":
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


P = ParamSpec("P")
T = TypeVar("T")


def friendly_errors(fn: Callable[P, T]) -> Callable[P, T]:
    """Turn verirank's own errors into one red line and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        setup_env()
        try:
            return fn(*args, **kwargs)
        except VerirankError as exc:
            raise fail(str(exc)) from None
        except KeyboardInterrupt:
            typer.secho("interrupted: finished items are saved; re-run the same command to resume",
                        fg=typer.colors.YELLOW, err=True)
            raise typer.Exit(130) from None

    return wrapper


def progress(iterable: Optional[Iterable[object]] = None, total: Optional[int] = None, desc: str = "", unit: str = "it"):
    """A tqdm progress bar on stderr; VERIRANK_NO_PROGRESS=1 hides it, =0 forces it."""
    from tqdm.auto import tqdm

    # bars only on a terminal (logs and CI get the summary lines), unless forced either way
    forced = os.environ.get("VERIRANK_NO_PROGRESS")
    disable = forced == "1" or (forced != "0" and not sys.stderr.isatty())
    return tqdm(iterable, total=total, desc=desc, unit=unit, file=sys.stderr, disable=disable,
                dynamic_ncols=True)


def summary(stage: str, counts: Counts) -> str:
    """One line such as ``extract: pages=20 ok=14 no_steps=5 ...`` (zero counts left out)."""
    shown = " ".join(f"{k}={v}" for k, v in counts.items() if v not in (0, None, "", [], {}))
    line = f"{stage}: {shown or 'nothing to do'}"
    if counts.get("rejected_queries") or counts.get("rejected_results"):
        line += "\n  some input lines were not used: their reasons are in DIR/rejected.jsonl"
    if stage == "search" and counts.get("beyond_top_n"):
        line += "\n  results after the first top_n of a query are recorded as beyond_top_n, not fetched"
    return line


def run_one(run_dir: Path, cfg: RunConfig, stage: Stage) -> Counts:
    """Run one stage through the runner (which logs it in DIR/manifest.json); returns its counts."""
    from verirank_core.stages import run_stages
    from verirank_core.store import RunDir

    outcome = run_stages(RunDir(run_dir), cfg, [stage], pipeline=stage.name, progress=progress,
                         echo=lambda line: None)
    return outcome[stage.name].counts
