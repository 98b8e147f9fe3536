"""Stage 1 end to end: search -> fetch -> clean, extract, ground.

Each step reads and writes plain files of the run directory ``DIR``::

    queries.jsonl     the input queries, normalised           (search_stage)
    serp.jsonl        the original ranking                    (search_stage)
    pages.jsonl       one fetch outcome per (qid, url)        (fetch_stage)
    cache/pages/      the fetched bodies, by sha256           (fetch_stage)
    extraction.jsonl  one Extraction per (qid, url)           (extract_stage)

Every step appends one whole line per item and skips items already stored,
so a killed run resumes with no loss and no duplicates. The stage objects at
the end (:class:`SearchStage`, :class:`FetchStage`, :class:`ExtractStage`) are
what the runner (:mod:`verirank_core.stages`) runs; it records their config and
counts in ``manifest.json``.

Per page, :func:`extract_one` never raises for a bad page: the outcome is a
status on the record (``fetch_failed``, ``parse_failed``,
``extractor_failed``, ``no_steps`` or ``ok``) with a human-readable reason.
The one exception is an LLM server that cannot be reached or refuses the
requests (:class:`LLMError`): that stops the stage with nothing recorded for
the page, so re-running after fixing the server extracts it.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Optional

from extraction.clean import clean_page
from extraction.extractor import Extractor
from extraction.ground import ground_steps
from verirank_core.extraction_records import (
    Extraction,
    ExtractionStatus,
    FetchStatus,
    Page,
    Query,
    RejectedLine,
    SearchResult,
)
from verirank_core.config import RunConfig
from verirank_core.errors import (
    ConfigError,
    ExtractionError,
    LLMError,
    LLMOutputError,
    SchemaError,
    StoreError,
)
from verirank_core.registry import Registry
from verirank_core.stages import require
from verirank_core.store import JsonlAppender, RunDir, read_jsonl, write_jsonl

__all__ = [
    "EXTRACTORS", "make_extractor", "extract_one", "extract_pages",
    "search_stage", "fetch_stage", "extract_stage", "run_stage1", "SearchStage", "FetchStage", "ExtractStage",
]

log = logging.getLogger(__name__)

def _heuristic(config: RunConfig, llm_client, encoder) -> Extractor:
    from extraction.heuristic import HeuristicExtractor

    return HeuristicExtractor(config.extraction.extract, encoder)


def _llm(config: RunConfig, llm_client, encoder) -> Extractor:
    from extraction.extract_llm import LLMExtractor

    if llm_client is None:
        from verirank_core.llm import LLMClient

        llm_client = LLMClient.from_config(config.llm)
    return LLMExtractor(llm_client, config.extraction.extract, config.extraction.clean)


#: extractor name (``extraction.extract.extractor``) -> builder(config, llm_client, encoder)
EXTRACTORS: Registry[Callable[[RunConfig, Any, Any], Extractor]] = Registry("extractor", {
    "heuristic": _heuristic,
    "llm": _llm,
})

Progress = Optional[Callable[[int], Any]]


def make_extractor(config: RunConfig, llm_client=None, encoder=None, name: Optional[str] = None) -> Extractor:
    """The extractor named by ``name`` or ``config.extraction.extract.extractor``.

    ``llm``: uses ``llm_client`` or builds one from ``config.llm``.
    """
    return EXTRACTORS.lookup(name or config.extraction.extract.extractor)(config, llm_client, encoder)


# --- one page ---------------------------------------------------------------------------


def extract_one(page: Page, query: Query, body: Optional[bytes], extractor: Extractor, encoder,
                config: RunConfig) -> Extraction:
    """Clean, extract and ground one fetched page; the outcome is always a record.

    ``body`` is the page's stored body (None when it could not be read).
    """
    start = time.monotonic()
    base = dict(qid=page.qid, url=page.url, rank=page.rank, title=page.title, query=query.query,
                extractor=extractor.name)

    def record(status: ExtractionStatus, reason: str = "", **fields: Any) -> Extraction:
        return Extraction(**base, status=status, reason=reason, elapsed_s=round(time.monotonic() - start, 4),
                          **fields)

    if not page.usable:
        return record(ExtractionStatus.FETCH_FAILED, f"{page.status.value}: {page.reason}".rstrip(": "))
    if body is None:
        return record(ExtractionStatus.FETCH_FAILED, "the page body is missing from the page cache")

    try:
        cleaned = clean_page(body, url=page.url, qid=page.qid, title_hint=page.title,
                             config=config.extraction.clean, encoding=page.encoding)
    except ExtractionError as exc:
        return record(ExtractionStatus.PARSE_FAILED, str(exc))
    except Exception as exc:  # a parser bug on one odd page must not stop the run
        log.exception("cleaning %s failed", page.url)
        return record(ExtractionStatus.PARSE_FAILED, f"unexpected {type(exc).__name__}: {exc}")
    if cleaned.title:
        base["title"] = cleaned.title

    try:
        out = extractor.extract(query, cleaned)
    except LLMOutputError as exc:  # this page's answer never validated: a status, the run goes on
        return record(ExtractionStatus.EXTRACTOR_FAILED, str(exc))
    except LLMError:
        # the model server is down or refuses us: stop, record nothing, so a re-run retries
        raise
    except Exception as exc:
        log.exception("extractor %s failed on %s", extractor.name, page.url)
        return record(ExtractionStatus.EXTRACTOR_FAILED, f"unexpected {type(exc).__name__}: {exc}")
    tokens = dict(prompt_tokens=out.prompt_tokens, completion_tokens=out.completion_tokens,
                  stated_platform=out.stated_platform, stated_device=out.stated_device, context=list(out.context))
    raw = [s for s in out.steps if s and s.strip()]
    if not raw:
        return record(ExtractionStatus.NO_STEPS, out.reason or "the extractor found no steps", **tokens)

    grounded = ground_steps(raw, cleaned, encoder, config.extraction.ground)
    if not grounded.steps:
        return record(ExtractionStatus.NO_STEPS,
                      f"none of the {len(raw)} extracted steps could be grounded in the page",
                      raw_steps=raw, dropped_steps=grounded.dropped, **tokens)
    reason = out.reason
    if grounded.dropped:
        reason += f"; {len(grounded.dropped)} step(s) not found on the page were dropped"
    return record(ExtractionStatus.OK, reason.lstrip("; "), raw_steps=raw, dropped_steps=grounded.dropped,
                  steps=grounded.steps, **tokens)


# --- all pages of a run ---------------------------------------------------------------------


def extract_pages(run_dir: RunDir, config: RunConfig, *, extractor: Optional[Extractor] = None,
                  encoder=None, progress: Progress = None) -> dict[str, int]:
    """Extract every page of ``DIR/pages.jsonl`` not yet in ``DIR/extraction.jsonl``.

    Pages ranked below ``top_n`` (fetch status ``beyond_top_n``) are not
    extracted: they are counted as ``beyond_top_n`` and get no Extraction.

    Returns counts: pages, skipped (already done), beyond_top_n, one count per
    status, steps (grounded, incl. recovered), recovered, dropped.
    """
    from extraction.pagecache import PageCache

    require(run_dir, ExtractStage.requires)  # for callers that skip the runner
    pages = read_jsonl(run_dir / "pages.jsonl", Page)
    queries = {q.qid: q for q in read_jsonl(run_dir / "queries.jsonl", Query)}
    if encoder is None:
        from verirank_core.embed import default_encoder

        encoder = default_encoder()
    if config.extraction.extract.encoder_threads:
        from verirank_core.embed import set_encoder_threads

        set_encoder_threads(config.extraction.extract.encoder_threads)
    if extractor is None:
        extractor = make_extractor(config, encoder=encoder)
    cache = PageCache.for_run(run_dir.path, config.extraction.fetch.cache_dir)

    counts: dict[str, int] = {"pages": len(pages), "skipped": 0, "beyond_top_n": 0,
                              "steps": 0, "recovered": 0, "dropped": 0}
    counts.update({s.value: 0 for s in ExtractionStatus})

    def work(page: Page) -> Extraction:
        query = queries.get(page.qid) or Query(qid=page.qid, query="")
        body = None
        if page.usable:
            try:
                body = cache.get(page.body_sha256 or "")
            except StoreError as exc:
                log.warning("%s", exc)
        rec = extract_one(page, query, body, extractor, encoder, config)
        appender.append(rec)
        return rec

    with JsonlAppender(run_dir / "extraction.jsonl", Extraction) as appender:
        todo = []
        for page in pages:
            if page.status == FetchStatus.BEYOND_TOP_N:
                counts["beyond_top_n"] += 1
                if progress:
                    progress(1)
            elif appender.done(page.key()):
                counts["skipped"] += 1
                if progress:
                    progress(1)
            else:
                todo.append(page)
        workers = config.extraction.extract.workers
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="extract") as pool:
                results = pool.map(work, todo)
                for rec in results:
                    _count(counts, rec)
                    if progress:
                        progress(1)
        else:
            for page in todo:
                _count(counts, work(page))
                if progress:
                    progress(1)
    return counts


def _count(counts: dict[str, int], rec: Extraction) -> None:
    counts[rec.status.value] += 1
    counts["steps"] += len(rec.steps)
    counts["recovered"] += sum(s.origin == "recovered" for s in rec.steps)
    counts["dropped"] += len(rec.dropped_steps)


# --- the three steps as stages of a run ---------------------------------------------------------


def search_stage(run_dir: RunDir, config: RunConfig, queries_path: Path,
                 serp_path: Optional[Path] = None, progress: Progress = None) -> dict[str, int]:
    """Read the queries into ``DIR/queries.jsonl`` and their results into ``DIR/serp.jsonl``.

    Lines of either file that cannot be used (malformed, duplicate key, a
    SERP row of an unknown qid) go to ``DIR/rejected.jsonl`` with a reason
    and are counted; only a file with no valid query at all stops the stage.
    """
    from extraction.queries import load_queries
    from extraction.search import SerpFileBackend, make_backend, run_search

    run_dir.ensure()
    rejected: list[RejectedLine] = []
    queries = load_queries(queries_path, rejected=rejected)
    if rejected and not queries:
        raise SchemaError(f"{queries_path}: no valid query; the first problem, line {rejected[0].line}: "
                          f"{rejected[0].reason}")
    write_jsonl(run_dir / "queries.jsonl", queries)
    backend = make_backend(config.extraction.search, serp_path, lenient=True)
    if isinstance(backend, SerpFileBackend):
        rejected += backend.rejected + backend.unknown_qids(q.qid for q in queries)
    write_jsonl(run_dir / "rejected.jsonl", rejected)
    for row in rejected:
        log.warning("%s line %d rejected (%s): %s", row.source, row.line, row.status, row.reason)
    with JsonlAppender(run_dir / "serp.jsonl", SearchResult) as appender:
        counts = run_search(queries, backend, config.extraction.search.top_n, appender, progress=progress)
    counts["rejected_queries"] = sum(r.source == "queries" for r in rejected)
    counts["rejected_results"] = sum(r.source == "serp" for r in rejected)
    return counts


def fetch_stage(run_dir: RunDir, config: RunConfig, progress: Progress = None, *, session=None) -> dict[str, int]:
    """Fetch every result of ``DIR/serp.jsonl`` into ``DIR/pages.jsonl`` and the page cache.

    ``session``: a requests session to fetch through. The fetcher looks in the
    page cache before it resolves a host, so a benchmark's pre-filled cache
    serves its fictional hosts with no exemption from the URL guard.
    """
    from extraction.fetch import Fetcher
    from extraction.pagecache import PageCache

    require(run_dir, FetchStage.requires)  # for callers that skip the runner
    results = read_jsonl(run_dir / "serp.jsonl", SearchResult)
    fcfg = config.extraction.fetch
    fetcher = Fetcher(fcfg, PageCache.for_run(run_dir.path, fcfg.cache_dir), session)
    with JsonlAppender(run_dir / "pages.jsonl", Page) as appender:
        counts = fetcher.fetch_all(results, appender, progress=progress,
                                   top_n=config.extraction.search.top_n)
    return counts


def extract_stage(run_dir: RunDir, config: RunConfig, progress: Progress = None, *,
                  extractor: Optional[Extractor] = None, encoder=None) -> dict[str, int]:
    """:func:`extract_pages` (which checks that the fetch stage ran)."""
    return extract_pages(run_dir, config, extractor=extractor, encoder=encoder, progress=progress)


def run_stage1(queries_path: Path, serp_path: Optional[Path], out_dir: Path, config: RunConfig,
               progress: Optional[Callable[..., Any]] = None, *,
               extractor: Optional[Extractor] = None, encoder=None) -> dict[str, dict[str, int]]:
    """search -> fetch -> extract into ``out_dir`` through the runner; returns the counts of each stage.

    ``progress`` is a tqdm-like factory (see :mod:`verirank_core.stages`).
    """
    from verirank_core.stages import run_stages

    stages = [SearchStage(Path(queries_path), serp_path), FetchStage(),
              ExtractStage(extractor=extractor, encoder=encoder)]
    outcomes = run_stages(RunDir(out_dir), config, stages, pipeline="stage1", progress=progress,
                          echo=lambda line: None)
    return {name: outcome.counts for name, outcome in outcomes.items()}


# --- the stage objects the runner runs (verirank_core.stages) ------------------------------------


def _bar(progress, run_dir: RunDir, source: str, desc: str):
    from verirank_core.store import count_lines

    return progress(total=count_lines(run_dir / source), desc=desc, unit="page")


class SearchStage:
    """``search``: the queries and their original ranking into the run directory."""

    name = "search"
    append_only = True
    requires = ()

    def __init__(self, queries: Optional[Path], serp: Optional[Path] = None, inputs: Any = None):
        #: ``inputs``: what identifies the query set in the fingerprint (e.g. a benchmark's name and seed)
        self.queries, self.serp, self.inputs = queries, serp, inputs

    def fingerprint(self, cfg: RunConfig) -> Any:
        from verirank_core.stages import digest

        return {"search": digest(cfg.extraction.search), "inputs": self.inputs}

    def __call__(self, run: RunDir, cfg: RunConfig, progress) -> dict[str, int]:
        if self.queries is None:
            raise ConfigError("no queries: give --queries (and --serp), or run with no inputs for the bundled demo")
        return search_stage(run, cfg, Path(self.queries), self.serp)


class FetchStage:
    """``fetch``: every result's page into ``pages.jsonl`` and the page cache (see :func:`fetch_stage`)."""

    name = "fetch"
    append_only = True
    requires = ("serp.jsonl",)

    def __init__(self, session=None):
        self.session = session

    def fingerprint(self, cfg: RunConfig) -> Any:
        from verirank_core.stages import digest

        # where the page cache lives does not change the pages (the demo points it at a build's cache)
        return digest(cfg.extraction.fetch.model_dump(mode="json", exclude={"cache_dir"}))

    def __call__(self, run: RunDir, cfg: RunConfig, progress) -> dict[str, int]:
        bar = _bar(progress, run, "serp.jsonl", "fetch")
        try:
            return fetch_stage(run, cfg, bar.update, session=self.session)
        finally:
            bar.close()


class ExtractStage:
    """``extract``: clean, extract and ground every fetched page (see :func:`extract_pages`)."""

    name = "extract"
    append_only = True
    requires = ("pages.jsonl", "queries.jsonl")

    def __init__(self, extractor: Optional[Extractor] = None, encoder=None):
        self.extractor, self.encoder = extractor, encoder

    def fingerprint(self, cfg: RunConfig) -> Any:
        from verirank_core.stages import digest

        ex = cfg.extraction
        return {"clean": digest(ex.clean), "extract": digest(ex.extract), "ground": digest(ex.ground),
                "llm": digest(cfg.llm) if ex.extract.extractor == "llm" else None}

    def __call__(self, run: RunDir, cfg: RunConfig, progress) -> dict[str, int]:
        bar = _bar(progress, run, "pages.jsonl", "extract")
        try:
            return extract_stage(run, cfg, bar.update, extractor=self.extractor, encoder=self.encoder)
        finally:
            bar.close()
