"""`verirank features`, `verirank rerank`, `verirank export`: stage 3 over a run directory."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, progress, resolve_config


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
    cfg = resolve_config(config, set_)
    counts = features_stage(run_dir, cfg, qrels)
    typer.echo(f"features: {counts['pages']} pages of {counts['queries']} queries, {counts['verified']} verified")
    for path in counts["files"]:
        typer.echo(f"wrote {path}")


def features_stage(run_dir: Path, cfg, qrels: Optional[Path] = None) -> dict:
    """Compute and write the feature files of a run directory; returns the stage counts."""
    from ranking.features import attach_labels, build_feature_table, write_feature_files
    from ranking.metrics import read_qrels
    from verirank_core.store import RunDir

    labels = read_qrels(qrels) if qrels is not None else None
    run = RunDir(run_dir)
    run.start_stage("features", cfg.to_manifest())
    table = build_feature_table(run_dir, cfg, progress=lambda it, total: progress(it, total, "features", "page"))
    if labels is not None:
        table = attach_labels(table, labels)
    paths = write_feature_files(run_dir, table)
    counts = {
        "pages": len(table),
        "queries": int(table["qid"].nunique()),
        "verified": int(table["verified"].sum()),
        "feature_names": list(cfg.ranking.features.names),
    }
    if labels is not None:
        counts["labelled_relevant"] = int((table["label"] > 0).sum())
    run.finish_stage("features", counts)
    return {**counts, "files": [str(p) for p in paths.values()]}


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
    cfg = resolve_config(config, set_, {"ranking.rerank.order": order})
    counts = rerank_stage(run_dir, cfg, model)
    typer.echo(f"rerank: {counts['pages']} pages of {counts['queries']} queries, "
               f"{counts['verified']} verified, {counts['moved']} moved")
    typer.echo(f"wrote {Path(run_dir) / 'reranked.jsonl'}")
    typer.echo(f"wrote {Path(run_dir) / 'reranked.trec'}")


def rerank_stage(run_dir: Path, cfg, model: str) -> dict:
    """Rerank a run directory with a saved model or MLflow URI; returns the stage counts."""
    from ranking.rerank import load_model, rerank_run
    from verirank_core.store import RunDir

    ranker = load_model(model, tracking_uri=cfg.ranking.tracking_uri)
    run = RunDir(run_dir)
    run.start_stage("rerank", cfg.to_manifest())
    items = rerank_run(run_dir, cfg, ranker)
    moved = sum(1 for it in items if it.rank != it.original_rank)
    counts = {"pages": len(items), "queries": len({it.qid for it in items}),
              "verified": sum(it.verified for it in items), "moved": moved, "model": str(model)}
    run.finish_stage("rerank", counts)
    return counts


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
