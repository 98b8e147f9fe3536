"""`verirank howtobench ...`: build HowToBench, the pre-training set, and import the paper's formats."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, progress, resolve_config

bench_app = typer.Typer(
    name="howtobench", no_args_is_help=True,
    help="HowToBench: build the benchmark and the pre-training set, serve its site, import the paper's data.",
)


@bench_app.command("build")
@friendly_errors
def build(
    small: bool = typer.Option(False, "--small", help="12 queries x 10 pages over 4 worlds (the demo subset)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output folder (default datasets/howtobench/build)."),
    seed: int = typer.Option(0, "--seed", help="Same seed, byte-identical output."),
    tasks: Optional[Path] = typer.Option(None, "--tasks", help="Task definitions folder (default datasets/howtobench/tasks)."),
) -> None:
    """Build HowToBench from the simulator worlds and task definitions.

    Writes queries.jsonl, serp.jsonl, qrels.txt, the static site, a pre-filled page
    cache (so `verirank fetch OUT` works offline), hidden labels/ and stats.md.

    Example:  verirank howtobench build --small --out runs/htb-small
    """
    from howtobench.build import DEFAULT_OUT, build_benchmark
    from howtobench.tasks import TASKS_DIR

    report = build_benchmark(out or DEFAULT_OUT, small=small, seed=seed, tasks_dir=tasks or TASKS_DIR,
                             progress=progress)
    c = report.correlation
    typer.echo(f"bench build: {report.queries} queries, {report.pages} pages, {report.relevant} relevant "
               f"({report.replays} distinct replays) -> {report.out}")
    typer.echo(f"original order vs relevance: spearman={c['spearman_rho']} kendall={c['kendall_tau']} "
               f"P@1={c['p_at_1']} (random {c['random_p_at_1']})")


@bench_app.command("pretrain")
@friendly_errors
def pretrain(
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Output run folder (default datasets/howtobench/build/pretrain)."),
    seed: int = typer.Option(0, "--seed"),
    valid_fraction: float = typer.Option(0.2, help="Share of queries in the valid split."),
    no_features: bool = typer.Option(False, "--no-features", help="Stop after execution (no feature table)."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Build the synthetic pre-training set (How-to META-GUI style) from the pretrain tasks.

    Executes generated instructions with the real agent and judge on sim:<world>, labels
    every candidate by replay, then writes features.parquet/svmlight and train/ valid/.

    Example:  verirank howtobench pretrain --out runs/pretrain --set execution.save_screens=false
    """
    from howtobench.pretrain import DEFAULT_PRETRAIN_OUT, build_pretrain, format_pretrain_stats

    cfg = resolve_config(config, set_)
    summary = build_pretrain(out or DEFAULT_PRETRAIN_OUT, cfg, seed=seed, valid_fraction=valid_fraction,
                             features=not no_features, progress=progress)
    typer.echo(format_pretrain_stats(summary))


@bench_app.command("stats")
@friendly_errors
def stats(
    build_dir: Path = typer.Argument(..., help="A HowToBench build folder."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of Markdown."),
) -> None:
    """Print the Table 3-style statistics of a build (per app, per style, per variant)."""
    from howtobench.stats import compute_stats, format_stats_markdown

    s = compute_stats(build_dir)
    typer.echo(json.dumps(s, indent=2) if as_json else format_stats_markdown(s))


@bench_app.command("serve")
@friendly_errors
def serve(
    build_dir: Path = typer.Argument(..., help="A HowToBench build folder (its site/ is served)."),
    port: int = typer.Option(8765, "--port", "-p", help="Port on 127.0.0.1."),
) -> None:
    """Serve the build's static site on 127.0.0.1 (pages at /HOST/PATH; Ctrl-C stops)."""
    from howtobench.site import serve_site

    site = build_dir / "site" if (build_dir / "site").is_dir() else build_dir
    typer.echo(f"serving {site} on http://127.0.0.1:{port}/ (Ctrl-C to stop)")
    try:
        serve_site(site, port)
    except KeyboardInterrupt:
        typer.echo("stopped")


@bench_app.command("import-weweb")
@friendly_errors
def import_weweb_cmd(
    src: Path = typer.Argument(..., help="How-to WeWeb folder (queries.tsv, results.jsonl, labels.tsv, pages/)."),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory to create."),
) -> None:
    """Convert the paper's How-to WeWeb layout into a run directory (then `verirank extract RUN`)."""
    from howtobench.importers.weweb import import_weweb

    counts = import_weweb(src, out)
    typer.echo("import-weweb: " + ", ".join(f"{k}={v}" for k, v in counts.items()) + f" -> {out}")


@bench_app.command("import-magicwand")
@friendly_errors
def import_magicwand_cmd(
    files: list[Path] = typer.Argument(..., help="MagicWand trajectory JSON files."),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory to write."),
) -> None:
    """Import MagicWand trajectory JSON files as a run (queries, extraction, execution, trajectories)."""
    from howtobench.importers.magicwand import import_magicwand

    counts = import_magicwand(list(files), out)
    typer.echo("import-magicwand: " + ", ".join(f"{k}={v}" for k, v in counts.items()) + f" -> {out}")


@bench_app.command("export-magicwand")
@friendly_errors
def export_magicwand_cmd(
    trajectories: list[Path] = typer.Argument(
        ..., help="A run's trajectories.jsonl, or trajectory.json files (runs made before it, imports)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the MagicWand JSON files."),
) -> None:
    """Write trajectories in MagicWand's JSON format (one file per trajectory)."""
    from verirank_core.execution_records import Trajectory
    from howtobench.importers.magicwand import to_magicwand
    from verirank_core.store import atomic_write_json, iter_jsonl, read_json

    found: dict[tuple[str, str], Trajectory] = {}  # a page run again: its last trajectory
    for path in trajectories:
        for traj in (iter_jsonl(path, Trajectory) if Path(path).suffix == ".jsonl"
                     else [Trajectory.parse(read_json(path), where=str(path))]):
            found[(traj.qid, traj.url)] = traj
    for i, traj in enumerate(found.values()):
        atomic_write_json(out / f"{traj.qid}-{i:04d}.json", to_magicwand(traj))
    typer.echo(f"export-magicwand: {len(found)} files -> {out}")


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="howtobench")
    # the verb's old name, kept working but out of --help
    app.add_typer(bench_app, name="bench", hidden=True)
