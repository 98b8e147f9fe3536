"""`verirank run`: chain the pipeline's stages over one run directory.

The stages are the stage objects of each stage package (``extraction/pipeline.py``,
``execution/stage.py``, ``ranking/pipeline.py``), run in order by the one runner
(:func:`verirank_core.stages.run_stages`), which logs each in ``DIR/manifest.json``.
Every stage resumes, so re-running the same command after an interruption
finishes the work.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, progress, resolve_config, summary
from verirank_core.config import RunConfig
from verirank_core.errors import ConfigError
from verirank_core.resources import BUNDLED_MODEL
from verirank_core.stages import Counts, Stage, StageOutcome, run_stages
from verirank_core.store import RunDir

#: where --quickstart writes when no --out is given
QUICKSTART_OUT = Path("runs/quickstart")

#: the stage names `verirank run` chains, in order
STAGE_NAMES = ("search", "fetch", "extract", "execute", "features", "rerank")


def pipeline_stages(queries: Optional[Path], serp: Optional[Path] = None, qrels: Optional[Path] = None,
                    model: Optional[str] = None) -> list[Stage]:
    """The stages of `verirank run`, in order."""
    from execution.stage import ExecuteStage
    from extraction.pipeline import ExtractStage, FetchStage, SearchStage
    from ranking.pipeline import FeaturesStage, RerankStage

    return [SearchStage(queries, serp), FetchStage(), ExtractStage(), ExecuteStage(), FeaturesStage(qrels),
            RerankStage(model or str(BUNDLED_MODEL))]


def _describe(name: str, outcome: StageOutcome) -> str:
    return summary(name, outcome.counts)


def run_pipeline(run_dir: RunDir, cfg: RunConfig, stages: list[Stage], until: Optional[str] = None,
                 echo: Callable[[str], None] = typer.echo) -> dict[str, Counts]:
    """Run ``stages`` in order (up to and including ``until``); returns each stage's counts."""
    outcomes = run_stages(run_dir, cfg, stages, pipeline="run", progress=progress, echo=echo, until=until,
                          describe=_describe)
    return {name: outcome.counts for name, outcome in outcomes.items()}


@friendly_errors
def run(
    queries: Optional[Path] = typer.Option(None, "--queries", "-q", help="Queries (JSONL or TSV)."),
    serp: Optional[Path] = typer.Option(None, "--serp", help="Stored search results (JSONL) for the serp-file backend."),
    quickstart: bool = typer.Option(
        False, "--quickstart", help="Instead of --queries/--serp: the 4 bundled quick-start queries, their pages "
                                    "served on 127.0.0.1 (no network, no API key).",
    ),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Run directory to create or resume "
                                                                 "(--quickstart: runs/quickstart by default)."),
    allow_private_hosts: bool = typer.Option(
        False, "--allow-private-hosts", help="Allow pages on localhost/private networks (local corpora). --quickstart sets it.",
    ),
    extractor: Optional[str] = typer.Option(None, "--extractor", "-e", help="heuristic (default) or llm."),
    devices: Optional[str] = typer.Option(
        None, "--devices", "-d", help="Comma-separated device specs for stage 2: sim:WORLD or adb:SERIAL, or `farm` for every phone a Ray farm advertises (docs/farm.md).",
    ),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="Ranker for the rerank stage: a saved model dir or MLflow URI "
                                    "(default: the bundled zero-shot LR in datasets/models/lr-pretrain).",
    ),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels to add as labels to the feature files."),
    until: Optional[str] = typer.Option(None, "--until", help="Stop after this stage (e.g. fetch)."),
    no_reuse: bool = typer.Option(
        False, "--no-reuse", help="Stage 2 runs every page on a device, even one whose verdict an earlier run "
                                  "stored (execution.reuse=false)."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Run the pipeline stages in order over one run directory: search -> fetch -> extract -> execute -> features -> rerank.

    --quickstart runs these same stages on the bundled quick-start pages
    (datasets/demo/, served on 127.0.0.1) into runs/quickstart. `verirank demo`
    is the other bundled run: the benchmark subset on simulators, with training
    and evaluation. Each stage resumes, so after an interruption re-run the same
    command. DIR/manifest.json records the config and counts of every stage.

    Examples:

      verirank run --quickstart

      verirank run --queries datasets/demo/queries.jsonl --serp my-serp.jsonl --out runs/mine

      verirank run -q queries.tsv --serp serp.jsonl -o runs/llm --extractor llm --until extract
    """
    from extraction.localsite import demo_inputs

    if quickstart and (queries is not None or serp is not None):
        raise ConfigError("--quickstart runs the bundled queries: give it without --queries/--serp")
    if not quickstart and queries is None:
        raise ConfigError("--serp was given without --queries" if serp is not None else
                          "give --queries (and --serp), or --quickstart to run the bundled quick-start pages")
    if not quickstart and out is None:
        raise ConfigError(f"--out is required with --queries (--quickstart writes to {QUICKSTART_OUT})")
    out = out or QUICKSTART_OUT
    cfg = resolve_config(config, set_, {
        "extraction.fetch.allow_private_hosts": True if (allow_private_hosts or quickstart) else None,
        "extraction.extract.extractor": extractor,
        "execution.devices": [d.strip() for d in devices.split(",") if d.strip()] if devices else None,
        "execution.reuse": False if no_reuse else None,
    })
    run_dir = RunDir(out).ensure()
    if quickstart:
        typer.echo(f"quick start: the bundled queries and pages (served on 127.0.0.1) through every stage into {out}")
        with demo_inputs(out) as (demo_queries, demo_serp):
            run_pipeline(run_dir, cfg, pipeline_stages(demo_queries, demo_serp, qrels, model), until)
    else:
        run_pipeline(run_dir, cfg, pipeline_stages(queries, serp, qrels, model), until)
    typer.echo(f"done: see {out}/ (manifest.json lists what each stage did)")


def register(app: typer.Typer) -> None:
    # with no arguments it prints its help: it never picks inputs by itself
    app.command("run", no_args_is_help=True)(run)
