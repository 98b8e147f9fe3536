"""`verirank search`, `verirank fetch`, `verirank extract`: stage 1, one step at a time."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional

import typer

from verirank.commands._common import ConfigOpt, SetOpt, friendly_errors, progress, resolve_config


@contextmanager
def bar(total: int, desc: str, unit: str = "page") -> Iterator[Any]:
    """A progress bar; yields the callable that is told how many items finished."""
    pbar = progress(total=total, desc=desc, unit=unit)
    try:
        yield pbar.update
    finally:
        pbar.close()


def summary(stage: str, counts: dict[str, Any]) -> str:
    """One line such as ``extract: pages=20 ok=14 no_steps=5 ...`` (zero counts left out)."""
    shown = " ".join(f"{k}={v}" for k, v in counts.items() if v not in (0, None, "", [], {}))
    line = f"{stage}: {shown or 'nothing to do'}"
    if counts.get("rejected_queries") or counts.get("rejected_results"):
        line += "\n  some input lines were not used: their reasons are in DIR/rejected.jsonl"
    if stage == "search" and counts.get("beyond_top_n"):
        line += "\n  results after the first top_n of a query are recorded as beyond_top_n, not fetched"
    return line


@friendly_errors
def search(
    queries: Path = typer.Option(..., "--queries", "-q", help="Queries: JSONL {qid, query, app?, device?} or TSV qid<TAB>query."),
    serp: Optional[Path] = typer.Option(None, "--serp", help="Stored search results (JSONL {qid, rank, url, title?, snippet?}) for the serp-file backend."),
    out: Path = typer.Option(..., "--out", "-o", help="Run directory to create or resume."),
    top_n: Optional[int] = typer.Option(None, "--top-n", help="Keep the first N results per query (extraction.search.top_n)."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Read the queries and their original ranking into a run directory.

    Writes DIR/queries.jsonl and DIR/serp.jsonl. With the default serp-file backend the
    ranking comes from --serp; `--set extraction.search.backend=brave` calls the Brave
    Search API instead (key in the variable named by extraction.search.api_key_env).
    Re-running resumes: queries already searched are skipped.

    Examples:

      verirank search --queries datasets/demo/queries.jsonl --serp datasets/demo/serp.jsonl --out runs/demo

      verirank search -q my-queries.tsv -o runs/live --set extraction.search.backend=brave --top-n 10
    """
    from extraction.pipeline import search_stage
    from verirank.store import RunDir

    cfg = resolve_config(config, set_, {"extraction.search.top_n": top_n})
    counts = search_stage(RunDir(out), cfg, queries, serp)
    typer.echo(summary("search", counts))
    typer.echo(f"wrote {out / 'queries.jsonl'} and {out / 'serp.jsonl'}")


@friendly_errors
def fetch(
    run_dir: Path = typer.Argument(..., help="Run directory holding serp.jsonl (from `verirank search`)."),
    allow_private_hosts: bool = typer.Option(
        False, "--allow-private-hosts",
        help="Allow pages on localhost/private networks (local corpora, tests). Off by default: SSRF guard.",
    ),
    workers: Optional[int] = typer.Option(None, "--workers", "-w", help="Parallel downloads (extraction.fetch.workers)."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Download every search result into the page cache and DIR/pages.jsonl.

    One record per (qid, url) with a status (ok, too_large, http_error, timeout, blocked,
    not_html, ...) and a reason. Bodies go to DIR/cache/pages/ by sha256. Re-running
    resumes: pages already recorded are skipped.

    Examples:

      verirank fetch runs/demo --allow-private-hosts

      verirank fetch runs/live --workers 16 --set extraction.fetch.per_host_delay_s=1
    """
    from extraction.pipeline import fetch_stage
    from extraction.records import SearchResult
    from verirank.store import RunDir, read_jsonl

    cfg = resolve_config(config, set_, {
        "extraction.fetch.allow_private_hosts": True if allow_private_hosts else None,
        "extraction.fetch.workers": workers,
    })
    run = RunDir(run_dir)
    serp_path = run / "serp.jsonl"
    total = len(read_jsonl(serp_path, SearchResult)) if serp_path.exists() else 0
    with bar(total, "fetch") as done:
        counts = fetch_stage(run, cfg, done)
    typer.echo(summary("fetch", counts))
    typer.echo(f"wrote {run_dir / 'pages.jsonl'}")


@friendly_errors
def extract(
    run_dir: Path = typer.Argument(..., help="Run directory holding pages.jsonl (from `verirank fetch`)."),
    extractor: Optional[str] = typer.Option(
        None, "--extractor", "-e", help="heuristic (default, no LLM) or llm (uses the llm section of the config).",
    ),
    no_ground: bool = typer.Option(False, "--no-ground", help="Keep the extractor's steps without grounding them."),
    config: Optional[list[Path]] = ConfigOpt,
    set_: Optional[list[str]] = SetOpt,
) -> None:
    """Clean each fetched page, extract its steps for the query and ground them in the HTML.

    Writes DIR/extraction.jsonl: per (qid, url) a status (ok, no_steps, fetch_failed,
    parse_failed, extractor_failed), a reason, the raw steps, the grounded steps with the
    XPath of the page element each came from, and the steps grounding dropped.
    Re-running resumes: pages already extracted are skipped.

    Examples:

      verirank extract runs/demo

      verirank extract runs/demo --extractor llm --set llm.model=gpt-4o-mini

      verirank extract runs/demo --set extraction.ground.distance_threshold=0.35
    """
    from extraction.pipeline import extract_stage
    from extraction.records import Page
    from verirank.store import RunDir, read_jsonl

    cfg = resolve_config(config, set_, {
        "extraction.extract.extractor": extractor,
        "extraction.ground.enabled": False if no_ground else None,
    })
    run = RunDir(run_dir)
    pages_path = run / "pages.jsonl"
    total = len(read_jsonl(pages_path, Page)) if pages_path.exists() else 0
    with bar(total, "extract") as done:
        counts = extract_stage(run, cfg, done)
    typer.echo(summary("extract", counts))
    typer.echo(f"wrote {run_dir / 'extraction.jsonl'}")


def register(app: typer.Typer) -> None:
    app.command("search")(search)
    app.command("fetch")(fetch)
    app.command("extract")(extract)
