"""`verirank demo` (the whole pipeline on the bundled benchmark) and `verirank report DIR`."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, progress, resolve_config


def _quiet_libraries() -> None:
    """Keep the terminal to verirank's own progress bars and table."""
    import os

    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")  # the MiniLM "Loading weights" bar
    os.environ.setdefault("MLFLOW_LOGGING_LEVEL", "WARNING")  # read when mlflow is first imported


@friendly_errors
def demo(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Output folder; re-running resumes it."),
    small: bool = typer.Option(True, "--small/--full",
                               help="The committed 12-query subset (default) or the full build "
                                    "(datasets/howtobench/build, from `verirank howtobench build`)."),
    data: Optional[Path] = typer.Option(None, "--data", help="Another HowToBench folder (overrides --small/--full)."),
    no_train: bool = typer.Option(False, "--no-train",
                                  help="Load the bundled pre-trained ranker instead of training it."),
    model_dir: Optional[Path] = typer.Option(None, "--model-dir",
                                             help="With --no-train: a saved ranker folder (default: bundled LR)."),
    pretrain: Optional[Path] = typer.Option(None, "--pretrain",
                                            help="Pre-training features folder (train/ and valid/ features.parquet; "
                                                 "default: datasets/models/pretrain-features)."),
    tracking_uri: Optional[str] = typer.Option(None, "--tracking-uri",
                                               help="MLflow tracking URI (default: sqlite:///OUT/mlflow.db)."),
    queries: Optional[int] = typer.Option(None, "--queries", "-n", help="Use only N queries, spread over the apps."),
    devices: int = typer.Option(2, "--devices", help="Simulator devices run in parallel."),
    fresh: bool = typer.Option(False, "--fresh", help="Delete OUT's earlier demo outputs first."),
    open_report: bool = typer.Option(False, "--open", help="Open report.html in the web browser at the end."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Run the whole pipeline on the bundled HowToBench subset: no network, no API key.

    Serves the benchmark pages on 127.0.0.1; extracts and grounds the steps;
    runs them on two simulator devices; computes features F1-F18;
    trains LR on the synthetic pre-training set (zero-shot) or loads the bundled one;
    reranks; evaluates against the original order and the oracle (MLflow under OUT);
    writes OUT/report.html and prints the summary table.

    Re-running the same command reuses finished stages. See docs/demo.md.

    Examples:

      verirank demo

      verirank demo --no-train --open

      verirank demo --queries 4 --out runs/quick

      verirank demo --full --out runs/full --set ranking.model=lambdamart
    """
    from verirank.demo import DemoOptions, format_summary, reset_outputs, run_demo
    from verirank_core.resources import BUNDLED_MODEL, FULL_BENCH, PRETRAIN_FEATURES, SMALL_BENCH

    _quiet_libraries()
    cfg = resolve_config(config, set_)
    options = DemoOptions(
        out=out, data=data or (SMALL_BENCH if small else FULL_BENCH), train=not no_train,
        model_dir=model_dir or BUNDLED_MODEL, pretrain=pretrain or PRETRAIN_FEATURES,
        tracking_uri=tracking_uri, devices=devices, max_queries=queries,
    )
    if fresh:
        reset_outputs(out)
    typer.echo(f"verirank demo: {options.data} -> {out}")
    result = run_demo(options, cfg, progress=progress, echo=typer.echo)
    typer.echo("")
    typer.echo(format_summary(result.summary))
    typer.echo("")
    typer.echo(f"reranked lists: {out / 'reranked.trec'}, {out / 'reranked.jsonl'}")
    typer.echo(f"MLflow: {result.summary['tracking_uri']} (experiment {result.summary['experiment']})")
    if result.report:
        typer.echo(f"report: {result.report}")
        if open_report:
            import webbrowser

            webbrowser.open(result.report.resolve().as_uri())


@friendly_errors
def report(
    run_dir: Path = typer.Argument(..., help="A run directory (from `verirank demo` or `verirank run`)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="HTML file to write (default: DIR/report.html)."),
    qrels: Optional[Path] = typer.Option(None, "--qrels", help="Relevance judgements to mark (default: DIR/qrels.txt)."),
    open_report: bool = typer.Option(False, "--open", help="Open the report in the web browser."),
) -> None:
    """Write the HTML report of a run: original vs reranked lists, steps, trajectories.

    The output is a self-contained folder: the HTML file plus assets/ with the annotated
    screenshots (no JavaScript, no external URLs).

    Examples:

      verirank report runs/demo

      verirank report runs/mine --out /tmp/mine/report.html --qrels qrels.txt
    """
    from verirank.report import build_report

    path = build_report(run_dir, out or run_dir / "report.html", qrels=qrels, progress=progress)
    typer.echo(f"wrote {path}")
    if open_report:
        import webbrowser

        webbrowser.open(path.resolve().as_uri())


def register(app: typer.Typer) -> None:
    app.command("demo", help=demo.__doc__)(demo)
    app.command("report", help=report.__doc__)(report)
