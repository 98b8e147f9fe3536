"""`verirank features`, `verirank rerank`, `verirank export`: stage 3 over a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, resolve_config, run_one


@friendly_errors
def features(
    run_dir: Path = typer.Argument(..., help="Run directory holding extraction.jsonl and execution.jsonl."),
    qrels: Optional[Path] = typer.Option(
        None, "--qrels", help="TREC qrels (qid 0 url grade): adds a label column for training.",
    ),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Compute features F1-F18 and the verified flag for every (query, page).

    Reads DIR/queries.jsonl (optional), DIR/extraction.jsonl, DIR/execution.jsonl and the
    trajectories; writes DIR/features.parquet, DIR/features.svmlight and DIR/features.qids.tsv.
    Labels from --qrels are joined after the features are computed; they never enter a feature.

    Examples:

      verirank features runs/demo --qrels datasets/benchmark/qrels.txt

      verirank features runs/demo --set ranking.features.relevance=llm
    """
    from ranking.pipeline import FEATURE_FILES, FeaturesStage

    cfg = resolve_config(config, set_)
    counts = run_one(run_dir, cfg, FeaturesStage(qrels))
    typer.echo(f"features: {counts['pages']} pages of {counts['queries']} queries, {counts['verified']} verified")
    for name in FEATURE_FILES.values():
        typer.echo(f"wrote {Path(run_dir) / name}")


@friendly_errors
def rerank(
    run_dir: Path = typer.Argument(..., help="Run directory holding features.parquet and execution.jsonl."),
    model: str = typer.Option(
        ..., "--model", "-m",
        help="A saved model directory (from `verirank train`) or an MLflow model URI (runs:/ID/model, models:/NAME/1).",
    ),
    order: Optional[str] = typer.Option(
        None, help="verified-first (default: verified pages by score, then the rest in original order) or score.",
    ),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Rerank every query's results: verified pages first, ordered by the model's score.

    Writes DIR/reranked.jsonl (one RankedItem per page) and DIR/reranked.trec.
    The verified flag is recomputed under the current ranking.verified settings.

    Examples:

      verirank rerank runs/demo --model runs/demo/models/lr

      verirank rerank runs/demo --model runs:/4f2a.../model --set ranking.verified.rule=completed
    """
    from ranking.pipeline import RerankStage

    cfg = resolve_config(config, set_, {"ranking.rerank.order": order})
    counts = run_one(run_dir, cfg, RerankStage(model))
    typer.echo(f"rerank: {counts['pages']} pages of {counts['queries']} queries, "
               f"{counts['verified']} verified, {counts['moved']} moved")
    typer.echo(f"wrote {Path(run_dir) / 'reranked.jsonl'}")
    typer.echo(f"wrote {Path(run_dir) / 'reranked.trec'}")


@friendly_errors
def export(
    run_dir: Path = typer.Argument(..., help="Run directory holding reranked.jsonl (from `verirank rerank`)."),
    fmt: str = typer.Option("trec", "--format", "-f", help="trec, jsonl or csv."),
    out: Path = typer.Option(..., "--out", "-o", help="File to write."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Export the reranked lists as a TREC run, JSONL or CSV.

    Examples:

      verirank export runs/demo --format csv --out reranked.csv
    """
    from ranking.export import export_run

    cfg = resolve_config(config, set_)
    n = export_run(run_dir, fmt, out, tag=cfg.ranking.rerank.tag)
    typer.echo(f"wrote {n} rows to {out}")


def register(app: typer.Typer) -> None:
    app.command("features", help=features.__doc__)(features)
    app.command("rerank", help=rerank.__doc__)(rerank)
    app.command("export", help=export.__doc__)(export)
