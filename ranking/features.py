"""Execution features F1-F18 for each (query, page), and the feature table of a run.

Inputs are the extraction record (the page's instruction steps), the
execution record and the recorded trajectory only. Nothing here reads the
simulator goal or the relevance judgements: labels are joined to the table
*after* the features are computed (:func:`attach_labels`).

Every feature lies in [0, 1]. The exact definitions, with a worked example,
are in ``ranking/FEATURES.md``; the short version:

=========  ============================================================
F1         query terms found in the instructions / query terms
F2         page-query relevance (MiniLM cosine clipped to [0,1], or an LLM score)
F3         mean over steps of (keyword terms / terms)
F4         the judge's completion degree
F5-F8      action-verb ratio per step: mean, min, max, 4*variance
F9-F12     step terms visible on the full screen: mean, min, max, 4*variance
F13-F16    step terms among the distilled controls: mean, min, max, 4*variance
F17        (last step with a term on screen + 1) / steps
F18        (last matched step - first matched step) / max(1, steps - 1)
=========  ============================================================

Extra features (not in the default set; ``ranking.features.names`` adds
them): ``n_deviations_norm``, ``n_repairs_norm`` (what the agent did beyond
the page) and ``platform_match`` / ``device_match`` (does the page state the
platform and phone maker the query asks about: 1, another: 0, unstated: 0.5).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Mapping, Optional, Sequence, TypeVar

import numpy as np

from verirank_core.config import RunConfig
from verirank_core.execution_records import ExecutionResult, ExecutionStatus, Trajectory
from verirank_core.extraction_records import Extraction, Query
from verirank_core.platforms import stated_match, wanted_brand, wanted_platform
from verirank_core.ranking_config import ALL_FEATURES, PAPER_FEATURES
from ranking.screens import screen_terms_by_step
from ranking.terms import ACTION_VERBS, content_terms
from ranking.verified import facts_from_execution, is_verified
from verirank_core.errors import SchemaError
from verirank_core.stages import Progress
from verirank_core.trajectories import RunTrajectories
from verirank_core.json_types import JSONObject
from verirank_core.records import Record

if TYPE_CHECKING:
    import pandas as pd

    from verirank_core.embed import Encoder
    from verirank_core.llm import LLMClient

R = TypeVar("R", bound=Record)

__all__ = [
    "PAPER_FEATURES", "ALL_FEATURES", "META_COLUMNS", "RELEVANCE_SCHEMA",
    "instruction_texts", "relevance_text", "query_term_ratio", "embedding_relevance",
    "llm_relevance", "keyword_ratio", "action_ratios", "screen_ratios", "spread",
    "match_position", "platform_features", "compute_features", "load_run_inputs", "build_feature_table",
    "attach_labels", "feature_columns", "write_feature_files",
]

#: non-feature columns of features.parquet, in order (``label`` follows when qrels are given)
META_COLUMNS: tuple[str, ...] = ("qid", "url", "rank", "title", "verified")

#: JSON schema of the LLM's answer for F2
RELEVANCE_SCHEMA: JSONObject = {
    "type": "object",
    "properties": {"score": {"type": "number", "minimum": 0, "maximum": 1}},
    "required": ["score"],
    "additionalProperties": False,
}

_RELEVANCE_PROMPT = (
    "You rate how well a web page answers a mobile how-to question. "
    "Read the question, the page title and the steps extracted from the page. "
    'Answer with JSON {"score": s} where s is a number from 0 (unrelated) to 1 '
    "(the steps answer the question fully)."
)


# --- text features -------------------------------------------------------------

def instruction_texts(extraction: Extraction) -> list[str]:
    """The page's instruction steps, in order (empty unless extraction succeeded)."""
    return [s.text for s in extraction.steps] if extraction.has_steps else []


def relevance_text(extraction: Extraction) -> str:
    """What F2 compares with the query: the title, then the steps, one per line."""
    return "\n".join([extraction.title.strip(), *instruction_texts(extraction)]).strip()


def query_term_ratio(query: str, steps: Sequence[str]) -> float:
    """F1 = |terms(query) ∩ terms(steps)| / |terms(query)| over distinct terms (0 if no query term)."""
    q = set(content_terms(query))
    if not q:
        return 0.0
    found: set[str] = set()
    for step in steps:
        found.update(content_terms(step))
    return len(q & found) / len(q)


def embedding_relevance(encoder: Encoder, query: str, text: str) -> float:
    """F2 (embedding): cosine of the MiniLM vectors, clipped to [0, 1]; 0 for an empty page."""
    if not text.strip():
        return 0.0
    vecs = encoder.encode([query, text])
    return _clip(float(vecs[0] @ vecs[1]))


def llm_relevance(client: LLMClient, query: str, extraction: Extraction) -> float:
    """F2 (LLM): the model's 0..1 score for how well the page answers the query."""
    if not relevance_text(extraction):
        return 0.0
    steps = instruction_texts(extraction)
    listing = "\n".join(f"{i + 1}. {s}" for i, s in enumerate(steps)) or "(no steps found)"
    messages = [
        {"role": "system", "content": _RELEVANCE_PROMPT},
        {"role": "user", "content": f"Question: {query}\nPage title: {extraction.title}\nSteps:\n{listing}"},
    ]
    result = client.complete_json(messages, RELEVANCE_SCHEMA, stage="ranking", schema_name="relevance")
    return _clip(float(result.data["score"]))


def keyword_ratio(steps: Sequence[str], keywords: frozenset[str]) -> float:
    """F3 = mean over steps of (terms that are keywords / terms); a step without terms counts 0."""
    if not steps:
        return 0.0
    return float(np.mean([_ratio(content_terms(s), lambda t: t in keywords) for s in steps]))


def action_ratios(steps: Sequence[str]) -> list[float]:
    """Per step: the fraction of its terms (repeats counted) that are action verbs (F5-F8)."""
    return [_ratio(content_terms(s), lambda t: t in ACTION_VERBS) for s in steps]


def screen_ratios(steps: Sequence[str], screens: Mapping[int, set[str]]) -> list[float]:
    """Per step: distinct step terms found on the step's screen / distinct step terms (F9-F16).

    Steps absent from ``screens`` (never reached) score 0.
    """
    out = []
    for i, step in enumerate(steps):
        terms = set(content_terms(step))
        seen = screens.get(i)
        out.append(len(terms & seen) / len(terms) if terms and seen else 0.0)
    return out


def spread(values: Sequence[float]) -> tuple[float, float, float, float]:
    """(mean, min, max, 4 * population variance) of values in [0, 1]; zeros if empty.

    The variance of numbers in [0, 1] is at most 1/4, so 4 * variance is in [0, 1].
    """
    if not values:
        return 0.0, 0.0, 0.0, 0.0
    arr = np.asarray(values, dtype=np.float64)
    return float(arr.mean()), float(arr.min()), float(arr.max()), _clip(4.0 * float(arr.var()))


def match_position(full_ratios: Sequence[float]) -> tuple[float, float]:
    """(F17, F18) from the per-step full-screen ratios; a step *matches* when its ratio > 0."""
    matched = [i for i, r in enumerate(full_ratios) if r > 0]
    if not matched:
        return 0.0, 0.0
    n = len(full_ratios)
    return (matched[-1] + 1) / n, (matched[-1] - matched[0]) / max(1, n - 1)


def platform_features(query: Query, extraction: Extraction, run_device: str = "") -> tuple[float, float]:
    """(platform_match, device_match): the platform and maker the page states for its steps
    (``Extraction.stated_platform`` / ``stated_device``) against those the query asks about
    (its device, app, text, else the run's device). 1 the same, 0 another, 0.5 unknown.

    Evidence for the ranker only: an iPhone page is still executed, since its steps may
    well work on the device.
    """
    platform = wanted_platform(query.query, query.device or "", query.app or "", run_device)
    brand, _ = wanted_brand(query.query, query.device or "", query.app or "", run_device)
    return stated_match(extraction.stated_platform, platform), stated_match(extraction.stated_device, brand)


def _ratio(terms: list[str], keep: Callable[[str], bool]) -> float:
    return sum(1 for t in terms if keep(t)) / len(terms) if terms else 0.0


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


# --- one page -------------------------------------------------------------------

def compute_features(
    query: Query,
    extraction: Extraction,
    execution: Optional[ExecutionResult],
    trajectory: Optional[Trajectory],
    *,
    traj_dir: Optional[Path],
    encoder: Optional[Encoder],
    keywords: frozenset[str],
    llm_client: Optional[LLMClient] = None,
    names: Sequence[str] = ALL_FEATURES,
    run_device: str = "",
) -> dict[str, float]:
    """The features ``names`` of one page, each in [0, 1].

    F2 uses ``llm_client`` when given, else ``encoder`` (``None``: the default
    MiniLM encoder, loaded only if F2 is asked for). Execution features are 0
    unless ``execution`` has status ``executed``; the screen features (F9-F18)
    also need ``trajectory``, whose XML dumps are read from ``traj_dir``.
    ``run_device`` (``extraction.extract.device``) stands for the query's device
    in ``platform_match``/``device_match`` when the query names none.
    """
    steps = instruction_texts(extraction)
    out: dict[str, float] = {}

    out["F1"] = query_term_ratio(query.query, steps)
    if "F2" in names:
        if llm_client is not None:
            out["F2"] = llm_relevance(llm_client, query.query, extraction)
        else:
            if encoder is None:
                from verirank_core.embed import default_encoder

                encoder = default_encoder()
            out["F2"] = embedding_relevance(encoder, query.query, relevance_text(extraction))
    out["F3"] = keyword_ratio(steps, keywords)
    out["F5"], out["F6"], out["F7"], out["F8"] = spread(action_ratios(steps))

    executed = execution is not None and execution.status == ExecutionStatus.EXECUTED
    out["F4"] = facts_from_execution(execution).f4
    full: dict[int, set[str]] = {}
    distilled: dict[int, set[str]] = {}
    if executed and trajectory is not None and steps:
        full, distilled = screen_terms_by_step(trajectory, traj_dir, len(steps))
    full_ratios = screen_ratios(steps, full)
    out["F9"], out["F10"], out["F11"], out["F12"] = spread(full_ratios)
    out["F13"], out["F14"], out["F15"], out["F16"] = spread(screen_ratios(steps, distilled))
    out["F17"], out["F18"] = match_position(full_ratios)
    out["n_deviations_norm"] = (
        _clip(execution.n_deviations / max(1, execution.n_actions)) if executed else 0.0
    )
    out["n_repairs_norm"] = repairs_norm(execution) if executed else 0.0
    out["platform_match"], out["device_match"] = platform_features(query, extraction, run_device)
    return {name: out[name] for name in names}


def repairs_norm(execution: ExecutionResult) -> float:
    """Repairs beyond the letter of the page per instruction step (extra feature ``n_repairs_norm``).

    Counts the deviation kinds a careful person would not need (``REPAIR_KINDS``: knowledge,
    reflection, ui_map, search) plus half a count per skipped grouping step, over the page's
    steps; scrolling and expanding "Advanced" are part of following a page and do not count.
    """
    from verirank_core.execution_records import REPAIR_KINDS

    kinds = getattr(execution, "deviation_kinds", None) or {}
    n = sum(v for k, v in kinds.items() if k in REPAIR_KINDS) + 0.5 * kinds.get("skip", 0)
    return _clip(n / max(1, execution.n_instructions))


# --- a run directory --------------------------------------------------------------

def _index(records: Iterable[R], path: Path) -> dict[tuple, R]:
    out: dict[tuple, R] = {}
    for rec in records:
        if rec.key() in out:
            raise SchemaError(f"{path}: {rec.key()} appears more than once")
        out[rec.key()] = rec
    return out


def load_run_inputs(run_dir: Path) -> tuple[dict[str, Query], list[Extraction], dict[tuple, ExecutionResult]]:
    """Queries by qid, extractions (file order) and execution results by (qid, url).

    ``queries.jsonl`` is optional (the query text is also on each extraction);
    ``extraction.jsonl`` and ``execution.jsonl`` are required.
    """
    from verirank_core.store import read_jsonl

    run_dir = Path(run_dir)
    ext_path, exe_path, q_path = (run_dir / n for n in ("extraction.jsonl", "execution.jsonl", "queries.jsonl"))
    extractions = list(_index(read_jsonl(ext_path, Extraction), ext_path).values())
    executions = _index(read_jsonl(exe_path, ExecutionResult), exe_path)
    queries = {q.qid: q for q in read_jsonl(q_path, Query)} if q_path.exists() else {}
    return queries, extractions, executions


def _query_for(ext: Extraction, queries: Mapping[str, Query], where: Path) -> Query:
    if ext.qid in queries:
        return queries[ext.qid]
    if ext.query.strip():
        return Query(qid=ext.qid, query=ext.query)
    raise SchemaError(f"{where}: no query text for qid {ext.qid!r} (not in queries.jsonl, empty on the extraction)")


def build_feature_table(
    run_dir: Path | str,
    config: RunConfig,
    *,
    encoder: Optional[Encoder] = None,
    llm_client: Optional[LLMClient] = None,
    progress: Optional[Progress] = None,
) -> pd.DataFrame:
    """One row per (qid, url) of ``extraction.jsonl``: META_COLUMNS then the configured features.

    ``config`` is a :class:`verirank_core.config.RunConfig`. Pages without steps or
    never executed are kept (their execution features are 0). Rows are sorted
    by qid, then original rank.
    """
    import pandas as pd

    from ranking.keywords import load_keywords

    run_dir = Path(run_dir)
    fcfg = config.ranking.features
    names = list(fcfg.names)
    queries, extractions, executions = load_run_inputs(run_dir)
    keywords = load_keywords(fcfg.keywords_path)

    if "F2" in names and fcfg.relevance == "llm" and llm_client is None:
        from verirank_core.llm import LLMClient

        llm_client = LLMClient.from_config(config.llm)
    if "F2" in names and llm_client is None:
        if encoder is None:
            from verirank_core.embed import default_encoder

            encoder = default_encoder()
        # one batched pass fills the encoder's cache; per-page calls then hit it
        texts = [t for e in extractions if (t := relevance_text(e))]
        texts += list({_query_for(e, queries, run_dir).query for e in extractions})
        encoder.encode(texts)

    rows = []
    trajectories = RunTrajectories(run_dir)
    items = progress(extractions, total=len(extractions), desc="features", unit="page") if progress else extractions
    for ext in items:
        query = _query_for(ext, queries, run_dir / "extraction.jsonl")
        execution = executions.get(ext.key())
        trajectory, traj_dir = None, None
        if execution is not None and execution.status == ExecutionStatus.EXECUTED and execution.trajectory:
            trajectory, traj_dir = trajectories.load(execution), trajectories.folder_of(execution)
        feats = compute_features(query, ext, execution, trajectory, traj_dir=traj_dir, encoder=encoder,
                                 keywords=keywords, llm_client=llm_client, names=names,
                                 run_device=config.extraction.extract.device)
        rows.append({
            "qid": ext.qid, "url": ext.url, "rank": ext.rank, "title": ext.title,
            "verified": is_verified(execution, config.ranking.verified),
            **feats,
        })
    table = pd.DataFrame(rows, columns=[*META_COLUMNS, *names])
    table = table.astype({"rank": "int64", "verified": bool, **{n: "float64" for n in names}})
    return table.sort_values(["qid", "rank"], kind="stable").reset_index(drop=True)


def attach_labels(table: pd.DataFrame, qrels: Mapping[str, Mapping[str, int]]) -> pd.DataFrame:
    """A copy of ``table`` with a ``label`` column: the qrels grade of (qid, url), else 0."""
    out = table.copy()
    out["label"] = [int(qrels.get(q, {}).get(u, 0)) for q, u in zip(out["qid"], out["url"])]
    return out


def feature_columns(table: pd.DataFrame) -> list[str]:
    """The feature columns of a feature table, in table order."""
    return [c for c in table.columns if c in ALL_FEATURES]


def write_feature_files(run_dir: Path | str, table: pd.DataFrame) -> dict[str, Path]:
    """Write ``features.parquet``, ``features.svmlight`` and ``features.qids.tsv``.

    svmlight rows are ``label qid:N 1:F.. 2:F.. # url`` with feature indices in
    table column order and N the 1-based number of the qid in sorted order;
    ``features.qids.tsv`` maps N back (``N<TAB>qid``); URL comments and
    qids are written as TREC docnos (verirank_core/docno.py). The label is the
    ``label`` column, or 0 when the table has none.
    """
    from ranking.svmlight import save_svmlight
    from verirank_core.docno import encode_docno
    from verirank_core.store import atomic_write_text, write_parquet

    run_dir = Path(run_dir)
    paths = {
        "parquet": run_dir / "features.parquet",
        "svmlight": run_dir / "features.svmlight",
        "qids": run_dir / "features.qids.tsv",
    }
    write_parquet(paths["parquet"], table)
    names = feature_columns(table)
    qid_numbers = {q: i for i, q in enumerate(sorted(table["qid"].unique()), start=1)}
    ordered = table.assign(_n=table["qid"].map(qid_numbers)).sort_values(["_n", "rank"], kind="stable")
    labels = ordered["label"].to_numpy(float) if "label" in ordered else np.zeros(len(ordered))
    # URLs and qids as TREC docnos (verirank_core/docno.py): a newline or tab in one cannot break a line
    save_svmlight(paths["svmlight"], ordered[names].to_numpy(np.float64), labels,
                  ordered["_n"].to_numpy(), comments=[encode_docno(str(u)) for u in ordered["url"]])
    atomic_write_text(paths["qids"], "".join(f"{n}\t{encode_docno(str(q))}\n" for q, n in qid_numbers.items()))
    return paths
