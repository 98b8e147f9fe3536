"""`verirank train` and `verirank evaluate`: fit rankers and score runs, tracked in MLflow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, resolve_config

TrackingOpt = typer.Option(
    None, "--tracking-uri",
    help="MLflow tracking URI (default: ranking.tracking_uri = sqlite:///mlflow.db in the working directory).",
)
ExperimentOpt = typer.Option(None, "--experiment", help="MLflow experiment name (default: ranking.experiment).")
NoTrackOpt = typer.Option(False, "--no-track", help="Do not record an MLflow run.")


@friendly_errors
def train(
    data: Path = typer.Option(..., "--data", "-d",
                              help="Training rows: svmlight/LETOR file, or a features.parquet with a label column."),
    model: Optional[str] = typer.Option(
        None, "--model", "-m", help="lr, tmlp-lambdaloss, tmlp-neuralndcg or lambdamart (default: ranking.model)."),
    out: Path = typer.Option(..., "--out", "-o", help="Directory to save the fitted model in."),
    query_file: Optional[Path] = typer.Option(
        None, "--query-file", help="Group sizes of --data (LightGBM form); default: DATA.query if it exists."),
    valid: Optional[Path] = typer.Option(
        None, "--valid", help="Validation rows for early stopping (default: hold out ranking.train.valid_frac "
                              "of the training queries)."),
    valid_query_file: Optional[Path] = typer.Option(None, "--valid-query-file", help="Group sizes of --valid."),
    test: Optional[Path] = typer.Option(None, "--test", help="Held-out rows: metrics, run file and per-query CSV."),
    test_query_file: Optional[Path] = typer.Option(None, "--test-query-file", help="Group sizes of --test."),
    epochs: Optional[int] = typer.Option(None, "--epochs", help="TMLP epochs (default: ranking.train.epochs)."),
    seed: Optional[int] = typer.Option(None, "--seed", help="Random seed (default: ranking.seed)."),
    tracking_uri: Optional[str] = TrackingOpt,
    experiment: Optional[str] = ExperimentOpt,
    register: Optional[str] = typer.Option(
        None, "--register", help="Also register the logged model under this name in the MLflow model registry."),
    no_track: bool = NoTrackOpt,
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Fit a learning-to-rank model, save it, and record an MLflow run.

    Writes OUT/ranker.json (+ weights), OUT/train_summary.json and OUT/<test|valid>.trec.
    Model hyperparameters beyond the flags go through --set ranking.train.params.NAME=VALUE.

    Examples:

      verirank train --data rank.train --test rank.test --model lambdamart --out models/lm

      verirank train --data runs/demo/features.parquet --model tmlp-lambdaloss --epochs 50 --out models/tmlp

      verirank train --data train.svmlight --valid valid.svmlight --model lr --out models/lr \\
        --tracking-uri sqlite:///mlflow.db --experiment verirank --register verirank-lr
    """
    from ranking.experiment import train as run_training

    cfg = resolve_config(config, set_, {
        "ranking.model": model, "ranking.seed": seed, "ranking.tracking_uri": tracking_uri,
        "ranking.experiment": experiment, "ranking.train.epochs": epochs,
    })
    rc = cfg.ranking
    outcome = run_training(
        data, rc.model, out,
        train_cfg=rc.train, eval_cfg=rc.evaluate, seed=rc.seed,
        query_file=query_file, valid_path=valid, valid_query_file=valid_query_file,
        test_path=test, test_query_file=test_query_file,
        config=cfg.to_manifest(),
        tracking_uri=None if no_track else rc.tracking_uri, experiment=rc.experiment,
    )
    typer.echo(f"trained {outcome.model.name} in {outcome.seconds:.1f}s; saved to {outcome.out_dir}")
    for split, result in (("valid", outcome.valid), ("test", outcome.test)):
        if result is not None:
            values = "  ".join(f"{m}={v:.4f}" for m, v in result.mean.items())
            typer.echo(f"{split} ({len(result.per_query)} queries): {values}")
    if outcome.run_id:
        typer.echo(f"MLflow run {outcome.run_id} ({rc.tracking_uri}); model URI runs:/{outcome.run_id}/model")
        if register:
            from ranking.tracking import register_model

            version = register_model(outcome.model_uri or f"runs:/{outcome.run_id}/model", register)
            typer.echo(f"registered as models:/{register}/{version}")
    elif register:
        typer.secho("--register needs tracking (drop --no-track)", fg=typer.colors.YELLOW, err=True)


@friendly_errors
def evaluate(
    run: Path = typer.Option(..., "--run", "-r", help="TREC run file (qid Q0 doc rank score tag)."),
    qrels: Path = typer.Option(..., "--qrels", "-q", help="TREC qrels file (qid 0 doc grade)."),
    baseline: Optional[Path] = typer.Option(
        None, "--baseline", "-b", help="A baseline TREC run: adds deltas and paired significance tests."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    gain: Optional[str] = typer.Option(None, "--gain", help="NDCG gain: linear (trec_eval) or exp (2^grade-1)."),
    metric: Optional[list[str]] = typer.Option(
        None, "--metric", help="Metric to report (MRR, P@k, NDCG@k); repeatable. Default: ranking.evaluate.metrics."),
    tracking_uri: Optional[str] = TrackingOpt,
    experiment: Optional[str] = ExperimentOpt,
    no_track: bool = NoTrackOpt,
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Score a run against qrels (MRR, P@1, P@5, NDCG@5, NDCG@10), optionally against a baseline.

    Averages are over every judged query (a query with no relevant page counts as 0);
    the last column averages only queries with a relevant page. p-values: paired
    two-sided t-test and paired randomisation test over queries.

    Examples:

      verirank evaluate --run runs/demo/reranked.trec --qrels datasets/benchmark/qrels.txt

      verirank evaluate --run reranked.trec --qrels qrels.txt --baseline original.trec --json --no-track
    """
    from ranking.experiment import evaluate_runs, format_eval_table

    cfg = resolve_config(config, set_, {
        "ranking.tracking_uri": tracking_uri, "ranking.experiment": experiment,
        "ranking.evaluate.gain": gain, "ranking.evaluate.metrics": metric or None,
    })
    rc = cfg.ranking
    report = evaluate_runs(
        run, qrels, baseline_path=baseline, eval_cfg=rc.evaluate, seed=rc.seed,
        tracking_uri=None if no_track else rc.tracking_uri, experiment=rc.experiment,
    )
    if as_json:
        typer.echo(json.dumps(report.to_dict(), indent=2, sort_keys=True))
    else:
        typer.echo(format_eval_table(report))
        if report.run_id:
            typer.echo(f"MLflow run {report.run_id} ({rc.tracking_uri})")


def register(app: typer.Typer) -> None:
    app.command("train")(train)
    app.command("evaluate")(evaluate)
