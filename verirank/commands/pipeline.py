"""`verirank run`: chain the pipeline's stages over one run directory.

The stages are the list :data:`STAGES` of ``(name, function)``; each function
takes a :class:`RunContext` and returns its counts. Stage 2 and 3 add
themselves by appending to the list (e.g. ``STAGES.append(("execute", fn))``),
so ``run`` needs no change when they arrive. Every stage resumes, so
re-running the same command after an interruption finishes the work.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, resolve_config
from verirank.commands.extraction import bar, summary
from verirank_core.config import RunConfig
from verirank_core.errors import ConfigError
from verirank_core.store import RunDir


@dataclass
class RunContext:
    """What every stage of `verirank run` gets."""

    run_dir: RunDir
    config: RunConfig
    queries: Optional[Path] = None
    serp: Optional[Path] = None
    #: qrels to attach as labels in the feature files (evaluation only)
    qrels: Optional[Path] = None
    #: a saved ranker or MLflow model URI for the rerank stage
    model: Optional[str] = None


def _count_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def _search(ctx: RunContext) -> dict[str, Any]:
    from extraction.pipeline import search_stage

    if ctx.queries is None:
        raise ConfigError("no queries: give --queries (and --serp), or run with no inputs for the bundled demo")
    return search_stage(ctx.run_dir, ctx.config, ctx.queries, ctx.serp)


def _fetch(ctx: RunContext) -> dict[str, Any]:
    from extraction.pipeline import fetch_stage

    with bar(_count_lines(ctx.run_dir / "serp.jsonl"), "fetch") as done:
        return fetch_stage(ctx.run_dir, ctx.config, done)


def _extract(ctx: RunContext) -> dict[str, Any]:
    from extraction.pipeline import extract_stage

    with bar(_count_lines(ctx.run_dir / "pages.jsonl"), "extract") as done:
        return extract_stage(ctx.run_dir, ctx.config, done)


def _execute(ctx: RunContext) -> dict[str, Any]:
    from execution.runner import execute_run
    from verirank.commands._common import progress
    from verirank.commands.execution import _llm_client_if_needed

    return execute_run(ctx.run_dir.path, ctx.config, llm_client=_llm_client_if_needed(ctx.config),
                       progress=progress)


def _features(ctx: RunContext) -> dict[str, Any]:
    from verirank.commands.ranking import features_stage

    counts = features_stage(ctx.run_dir.path, ctx.config, ctx.qrels)
    counts.pop("feature_names", None)
    return counts


def _rerank(ctx: RunContext) -> dict[str, Any]:
    from verirank.commands.ranking import rerank_stage

    return rerank_stage(ctx.run_dir.path, ctx.config, ctx.model or str(BUNDLED_MODEL))


#: the zero-shot ranker shipped with the project (datasets/models/README.md)
BUNDLED_MODEL = Path(__file__).resolve().parents[2] / "datasets" / "models" / "lr-pretrain"

#: the stages `verirank run` chains, in order
STAGES: list[tuple[str, Callable[[RunContext], dict[str, Any]]]] = [
    ("search", _search),
    ("fetch", _fetch),
    ("extract", _extract),
    ("execute", _execute),
    ("features", _features),
    ("rerank", _rerank),
]


def run_stages(ctx: RunContext, until: Optional[str] = None,
               echo: Callable[[str], None] = typer.echo) -> dict[str, dict[str, Any]]:
    """Run :data:`STAGES` in order (up to and including ``until``); returns each stage's counts."""
    names = [name for name, _ in STAGES]
    if until is not None and until not in names:
        raise ConfigError(f"unknown stage {until!r} for --until (valid: {', '.join(names)})")
    ctx.run_dir.ensure()
    out = {}
    for name, stage in STAGES:
        out[name] = stage(ctx)
        echo(summary(name, out[name]))
        if name == until:
            break
    return out


@friendly_errors
def run(
    queries: Optional[Path] = typer.Option(
        None, "--queries", "-q", help="Queries (JSONL or TSV). Omit together with --serp to run the bundled demo.",
    ),
    serp: Optional[Path] = typer.Option(None, "--serp", help="Stored search results (JSONL) for the serp-file backend."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Run directory to create or resume (bundled pages: runs/quickstart)."),
    allow_private_hosts: bool = typer.Option(
        False, "--allow-private-hosts", help="Allow pages on localhost/private networks (local corpora). The demo sets it.",
    ),
    extractor: Optional[str] = typer.Option(None, "--extractor", "-e", help="heuristic (default) or llm."),
    devices: Optional[str] = typer.Option(
        None, "--devices", "-d", help="Comma-separated device specs for stage 2: sim:WORLD or adb:SERIAL.",
    ),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Ranker for the rerank stage: a saved model dir or MLflow URI "
                                    "(default: the bundled zero-shot LR in datasets/models/lr-pretrain).",
    ),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels to add as labels to the feature files."),
    until: Optional[str] = typer.Option(None, "--until", help="Stop after this stage (e.g. fetch)."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Run the pipeline stages in order over one run directory: search -> fetch -> extract -> execute -> features -> rerank.

    With no --queries/--serp it runs the bundled demo: datasets/demo/ is served on
    127.0.0.1 and the results go to runs/quickstart (no network, no API key). Each stage
    resumes, so after an interruption re-run the same command. The manifest
    (DIR/manifest.json) records the config and counts of every stage.

    Examples:

      verirank run

      verirank run --queries datasets/demo/queries.jsonl --serp my-serp.jsonl --out runs/mine

      verirank run -q queries.tsv --serp serp.jsonl -o runs/llm --extractor llm --until extract
    """
    from extraction.localsite import demo_inputs

    demo = queries is None and serp is None
    if not demo and queries is None:
        raise ConfigError("--serp was given without --queries")
    if not demo and out is None:
        raise ConfigError("--out is required with --queries (the bundled pages go to runs/quickstart)")
    out = out or Path("runs/quickstart")
    cfg = resolve_config(config, set_, {
        "extraction.fetch.allow_private_hosts": True if (allow_private_hosts or demo) else None,
        "extraction.extract.extractor": extractor,
        "execution.devices": [d.strip() for d in devices.split(",") if d.strip()] if devices else None,
    })
    run_dir = RunDir(out).ensure()
    if demo:
        typer.echo(f"running the bundled demo into {out}")
        with demo_inputs(out) as (demo_queries, demo_serp):
            run_stages(RunContext(run_dir, cfg, demo_queries, demo_serp, qrels, model), until)
    else:
        run_stages(RunContext(run_dir, cfg, queries, serp, qrels, model), until)
    typer.echo(f"done: see {out}/ (manifest.json lists what each stage did)")


def register(app: typer.Typer) -> None:
    app.command("run")(run)
