"""Turn :class:`~verirank.report.collect.ReportData` into one HTML page (no JavaScript).

Every function here returns a string of escaped HTML; nothing reads files.
Screenshots are referenced through a :class:`Shots` map built by
:mod:`verirank.report.assets`, so the page links only to files of its own
``assets/`` folder.
"""

from __future__ import annotations

import datetime as _dt
from html import escape
from typing import Iterable, Mapping, Optional
from urllib.parse import urlsplit

from verirank_core.execution_records import ExecutionStatus, StepRecord
from verirank_core.json_types import JSONValue
from verirank.report.annotate import action_caption
from verirank.report.collect import PageView, QueryView, ReportData
from verirank.report.evidence import FINAL_SHOT, evidence_file, page_evidence, step_shot
from verirank.report.style import CSS

__all__ = ["Shot", "Shots", "render_html"]

#: (page anchor, screenshot file name) -> (path relative to the HTML file, width, height)
Shot = tuple[str, int, int]
Shots = Mapping[tuple[str, str], Shot]

#: metrics shown in the per-query table, when the summary has them
_QUERY_METRICS = ("MRR", "NDCG@5")


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _num(value: Optional[float], digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _host(url: str) -> str:
    parts = urlsplit(url)
    return (parts.hostname or "") + (parts.path if len(parts.path) <= 60 else parts.path[:57] + "…")


# --- badges -----------------------------------------------------------------------

def verification_badge(page: PageView) -> tuple[str, str]:
    """The badge ("verified on WORLD vX" in green, or why not in grey) and the detail after it."""
    ex = page.extraction
    if not page.verified and ex is not None and not ex.has_steps:
        # nothing was run: say why the page had no steps rather than "not executed"
        label = "no steps found" if ex.status.value == "no_steps" else ex.status.value.replace("_", " ")
        return f'<span class="badge no">{_e(label)}</span>', ex.reason
    head, _, detail = page.summary.partition(":")
    css = "ok" if page.verified else "no"
    mark = "✔ " if page.verified else ""
    return f'<span class="badge {css}">{mark}{_e(head.strip() or "not executed")}</span>', detail.strip()


def relevance_badge(page: PageView) -> str:
    if page.relevance is None:
        return ""
    if page.relevance > 0:
        return '<span class="badge rel" title="relevance judgement (qrels), used for evaluation only">relevant</span>'
    return ""


def move_mark(page: PageView) -> str:
    if page.new_rank is None or page.moved == 0:
        return ""
    if page.moved > 0:
        return f'<span class="move up" title="moved up {page.moved}">▲{page.moved}</span>'
    return f'<span class="move down" title="moved down {-page.moved}">▼{-page.moved}</span>'


# --- overview -----------------------------------------------------------------------

def _header(data: ReportData, title: str) -> str:
    model = (data.summary or {}).get("model", {})
    bits = [f"run <code>{_e(data.run_dir)}</code>"]
    if data.summary and data.summary.get("dataset"):
        bits.append(f"data <code>{_e(data.summary['dataset'])}</code>")
    if model.get("description"):
        bits.append(_e(model["description"]))
    bits.append("generated " + _dt.datetime.now().strftime("%Y-%m-%d %H:%M"))
    return (f'<header class="top"><h1>{_e(title)}</h1>'
            f'<p>{" · ".join(bits)}</p></header>')


def _cards(data: ReportData) -> str:
    counts = [
        ("queries", len(data.queries)),
        ("pages", data.count(lambda p: True)),
        ("with steps", data.count(lambda p: p.extraction is not None and p.extraction.has_steps)),
        ("executed", data.count(lambda p: p.execution is not None
                                and p.execution.status == ExecutionStatus.EXECUTED)),
        ("verified", data.count(lambda p: p.verified)),
    ]
    if any(p.relevance is not None for q in data.queries for p in q.original):
        counts.append(("judged relevant", data.count(lambda p: (p.relevance or 0) > 0)))
    cells = "".join(f'<div class="card"><b>{n}</b>{_e(label)}</div>' for label, n in counts)
    return f'<div class="cards">{cells}</div>'


def summary_table(summary: Mapping[str, JSONValue]) -> str:
    """The Table 5-style evaluation: one row per system, p-values against the baseline."""
    metrics = summary.get("metrics", [])
    rows = summary.get("rows", [])
    if not rows:
        return ""
    head = "".join(f'<th class="num">{_e(m)}</th>' for m in metrics)
    body = []
    for row in rows:
        cells = []
        for m in metrics:
            value = row["mean"].get(m)
            p = (row.get("p_permutation") or {}).get(m)
            star = '<span class="sig">*</span>' if p is not None and p < 0.05 else ""
            ptext = f'<span class="p">p={p:.3g}</span>' if p is not None else ""
            cells.append(f'<td class="num">{_num(value)}{star}{ptext}</td>')
        name = _e(row["system"])
        if row.get("note"):
            name += f'<span class="p">{_e(row["note"])}</span>'
        body.append(f"<tr><td>{name}</td>{''.join(cells)}</tr>")
    n = summary.get("n_queries")
    baseline = summary.get("baseline", "Original order")
    caption = (f"Means over {n} judged queries. p: paired randomisation test against "
               f"{_e(baseline)} (* p &lt; 0.05).") if n else ""
    return (f'<table class="summary"><thead><tr><th>system</th>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table><p class="muted small">{caption}</p>')


def _toc(data: ReportData) -> str:
    systems = _systems(data)
    head = "<th>#</th><th>query</th><th>world</th><th class='num'>verified</th>"
    for m in _QUERY_METRICS:
        for s in systems:
            head += f'<th class="num">{_e(m)}<span class="p">{_e(s)}</span></th>'
    rows = []
    for i, q in enumerate(data.queries, start=1):
        verified = sum(p.verified for p in q.original)
        cells = (f'<td class="num">{i}</td><td><a href="#q-{_e(q.query.qid)}">{_e(q.query.query)}</a></td>'
                 f'<td>{_e(q.world or "")}</td><td class="num">{verified}/{len(q.original)}</td>')
        for m in _QUERY_METRICS:
            for s in systems:
                cells += f'<td class="num">{_num(q.metrics.get(s, {}).get(m), 2)}</td>'
        rows.append(f"<tr>{cells}</tr>")
    return f'<table class="toc"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _systems(data: ReportData) -> list[str]:
    """Systems with per-query metrics to show: the baseline and the reranker."""
    if not data.summary:
        return []
    names = [data.summary.get("baseline", "Original order"), data.summary.get("system", "")]
    per_query = data.summary.get("per_query", {})
    return [n for n in names if n and n in per_query]


# --- one query ------------------------------------------------------------------------

def _result_item(page: PageView, rank: int, show_move: bool) -> str:
    badge, detail = verification_badge(page)
    css = "verified" if page.verified else "unverified"
    return (
        f'<li class="{css}"><span class="rank">{rank}</span><div class="what">'
        f'<a href="#{page.anchor}">{_e(page.title or page.url)}</a>'
        f'<div class="host">{_e(_host(page.url))}</div>'
        f'<div>{badge}{relevance_badge(page)}{move_mark(page) if show_move else ""}</div>'
        + (f'<div class="why">{_e(detail)}</div>' if detail else "")
        + "</div></li>"
    )


def _query_section(q: QueryView, shots: Shots, model_name: str) -> str:
    query = q.query
    meta = [f"qid <code>{_e(query.qid)}</code>"]
    if q.world:
        meta.append(f"world <code>{_e(q.world)}</code>")
    if query.device:
        meta.append(_e(query.device))
    if query.app:
        meta.append(f"app <code>{_e(query.app)}</code>")
    metric_line = ""
    if q.metrics:
        parts = [f"{_e(s)}: " + ", ".join(f"{_e(m)} {_num(v, 2)}" for m, v in vals.items() if m in _QUERY_METRICS)
                 for s, vals in q.metrics.items()]
        metric_line = f'<p class="muted small">{" · ".join(parts)}</p>'
    original = "".join(_result_item(p, p.original_rank, False) for p in q.original)
    lists = f'<div><h3>Original order</h3><ol class="results">{original}</ol></div>'
    if q.reranked:
        reranked = "".join(_result_item(p, p.new_rank or 0, True) for p in q.reranked)
        lists += f'<div><h3>Reranked ({_e(model_name)})</h3><ol class="results">{reranked}</ol></div>'
    else:
        lists += '<div><h3>Reranked</h3><p class="muted">This run was not reranked yet.</p></div>'
    pages = "".join(page_details(p, shots) for p in q.original)
    return (
        f'<section class="query" id="q-{_e(query.qid)}"><h2>{_e(query.query)}</h2>'
        f'<p class="muted small">{" · ".join(meta)}</p>{metric_line}'
        f'<div class="lists">{lists}</div>'
        f'<h3>Pages: steps, grounding and trajectory</h3>{pages}</section>'
    )


# --- one page ---------------------------------------------------------------------------

def page_details(page: PageView, shots: Shots) -> str:
    """A collapsible block: extraction with grounding, execution facts, judge, trajectory."""
    badge, _ = verification_badge(page)
    head = (f'<summary><b>#{page.original_rank}</b> {_e(page.title or page.url)} {badge}'
            f'{relevance_badge(page)}</summary>')
    body = [f'<p class="small"><code>{_e(page.url)}</code></p>', _extraction_block(page)]
    body.append(_execution_block(page))
    body.append(_evidence_block(page, shots))
    body.append(_trajectory_block(page, shots))
    return f'<details class="page">{head}<div class="body" id="{page.anchor}">{"".join(body)}</div></details>'


def _extraction_block(page: PageView) -> str:
    ex = page.extraction
    if ex is None:
        return '<h3>Extraction</h3><p class="muted">Not extracted.</p>'
    status_css = "ok" if ex.has_steps else "no"
    out = [f'<h3>Extraction</h3><p><span class="badge {status_css}">{_e(ex.status.value)}</span> '
           f'<span class="muted small">{_e(ex.extractor)} · {_e(ex.reason)}</span></p>']
    if ex.steps:
        rows = []
        for s in ex.steps:
            origin_css = {"extracted": "ok", "recovered": "warn"}.get(s.origin, "no")
            rows.append(
                f'<tr><td class="num">{s.index + 1}</td><td class="text">{_e(s.text)}</td>'
                f'<td><span class="badge {origin_css}">{_e(s.origin)}</span>'
                f'<span class="p">{_e(s.match or "")}</span></td>'
                f'<td class="num">{_num(s.rouge_l, 2)}</td><td class="num">{_num(s.distance, 2)}</td>'
                f'<td class="xpath"><code>{_e(s.xpath or "")}</code>'
                + (f'<span class="p">{_e(s.snippet)}</span>' if s.snippet and s.snippet != s.text else "")
                + "</td></tr>"
            )
        out.append(
            '<table class="steps"><thead><tr><th>#</th><th>step</th><th>origin</th>'
            '<th class="num">ROUGE-L</th><th class="num">distance</th><th>grounded at (XPath, snippet)</th>'
            f'</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        )
    if ex.dropped_steps:
        items = "".join(f"<li>{_e(s)}</li>" for s in ex.dropped_steps)
        out.append(f'<p class="small"><span class="badge bad">dropped</span> not found on the page:</p>'
                   f'<ul class="small">{items}</ul>')
    return "".join(out)


def _facts(pairs: Iterable[tuple[str, object]]) -> str:
    cells = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in pairs if v not in (None, ""))
    return f'<dl class="facts">{cells}</dl>'


def _execution_block(page: PageView) -> str:
    ex = page.execution
    if ex is None:
        return '<h3>Execution</h3><p class="muted">Not executed.</p>'
    if ex.status != ExecutionStatus.EXECUTED:
        return f'<h3>Execution</h3><p class="muted">{_e(ex.status.value)}: {_e(ex.reason)}</p>'
    facts = _facts([
        ("device", ex.device), ("world", ex.world), ("model", ex.device_model), ("serial", ex.device_serial),
        ("Android", ex.os_version), ("app", ex.app), ("app version", ex.app_version),
        ("stop reason", ex.stop_reason.value if ex.stop_reason else None), ("detail", ex.reason),
        ("actions", f"{ex.n_actions} ok, {ex.n_failed_actions} failed, {ex.n_deviations} deviations"),
        ("F4 (judge)", f"{ex.f4:.3f} ({ex.judge})"), ("time", f"{ex.elapsed_s:.1f} s"),
        # a verdict from the verdict cache: no device ran the page in this run
        ("reused", f"verified on {ex.verified_at[:10]}, no device run now" if ex.reused and ex.verified_at else None),
    ])
    return f"<h3>Execution</h3>{facts}{_judge_block(ex.judge_detail)}"


def _judge_block(detail: list[dict[str, object]]) -> str:
    """Per-step judgements as a table; other entries (the overall verdict) as notes."""
    steps = [d for d in detail if "step" in d]
    notes = [d for d in detail if "step" not in d]
    out = []
    if steps:
        keys = [k for k in dict.fromkeys(k for d in steps for k in d) if k != "step"]
        head = "".join(f"<th>{_e(k)}</th>" for k in keys)
        rows = []
        for d in steps:
            cells = "".join(f"<td>{_yes_no(d.get(k))}</td>" for k in keys)
            rows.append(f'<tr><td class="num">{int(d["step"]) + 1}</td>{cells}</tr>')
        out.append(f'<table class="judge small"><thead><tr><th>step</th>{head}</tr></thead>'
                   f'<tbody>{"".join(rows)}</tbody></table>')
    for note in notes:
        out.append('<p class="note">' + "; ".join(f"{_e(k)}: {_e(v)}" for k, v in note.items()) + "</p>")
    return "".join(out)


def _yes_no(value: object) -> str:
    if value is True:
        return '<span class="sig">yes</span>'
    if value is False:
        return '<span class="muted">no</span>'
    return _e(value)


def _evidence_block(page: PageView, shots: Shots) -> str:
    """For a verified page: per step, the cited screenshots where its effect is visible."""
    if not page.verified or page.trajectory is None:
        return ""
    items = []
    for ev in page_evidence(page.trajectory):
        head = f'<b>Step {ev.step + 1}</b> <span class="instr">{_e(ev.instruction)}</span>'
        if ev.record is None:
            items.append(f'<li class="missing"><div class="cite">{head}<br>'
                         '<span class="muted">no evidence: the agent did not complete this step</span></div></li>')
            continue
        control = f"'{_e(ev.label)}'" if ev.label else "the screen"
        if ev.how == "already done":
            cite = f"already done on screen #{ev.record + 1}" + (f": {_e(ev.note)}" if ev.note else "")
        else:
            still = "" if ev.effect_bounds is None else f", where {control} is boxed again"
            cite = (f"matched {control} on screen #{ev.record + 1}; the effect shows on the "
                    f"{_e(ev.effect_where)}{still}")
        figures = []
        kinds = (("matched", "already done" if ev.label is None else "matched control"),) \
            if ev.how == "already done" else (("matched", "matched control"), ("effect", "effect"))
        for kind, caption in kinds:
            shot = shots.get((page.anchor, evidence_file(ev.step, kind)))
            if shot:
                figures.append(f'<figure class="evidence">{_img(shot, f"step {ev.step + 1}: {caption}")}'
                               f"<figcaption>{_e(caption)}</figcaption></figure>")
        if not figures:
            figures.append('<p class="muted small">no screenshot saved (execution.screenshots)</p>')
        items.append(f'<li><div class="cite">{head}<br>{cite}</div>{"".join(figures)}</li>')
    return f'<h3>Evidence</h3><ol class="evidence">{"".join(items)}</ol>'


def _trajectory_block(page: PageView, shots: Shots) -> str:
    if page.trajectory_error:
        return f'<h3>Trajectory</h3><p class="muted">Cannot show the trajectory: {_e(page.trajectory_error)}</p>'
    traj = page.trajectory
    if traj is None:
        return ""
    figures = [_step_figure(page, s, shots) for s in traj.steps]
    if traj.final_screenshot:
        shot = shots.get((page.anchor, FINAL_SHOT))
        if shot:
            caption = f"<b>final screen</b><br>stopped: {_e(traj.stop_reason.value)}"
            figures.append(f'<figure class="shot final">{_img(shot, "final screen")}'
                           f"<figcaption>{caption}</figcaption></figure>")
    detail = f'<p class="small">{_e(traj.stop_reason.value)}: {_e(traj.stop_detail)}</p>' if traj.stop_detail else ""
    return f'<h3>Trajectory ({len(traj.steps)} actions)</h3>{detail}<div class="strip">{"".join(figures)}</div>'


def _img(shot: Shot, alt: str) -> str:
    src, w, h = shot
    return f'<img src="{_e(src)}" width="{w}" height="{h}" alt="{_e(alt)}">'


def _step_figure(page: PageView, step: StepRecord, shots: Shots) -> str:
    traj = page.trajectory
    assert traj is not None
    instruction = ""
    if step.step_index is not None and 0 <= step.step_index < len(traj.instructions):
        instruction = (f'<br>step {step.step_index + 1}: '
                       f'<span class="instr">{_e(traj.instructions[step.step_index])}</span>')
    status = ""
    if not step.ok:
        status = f'<br><span class="badge bad">failed</span> {_e(step.failure_reason or "")}'
    elif step.noop:
        status = '<br><span class="badge no">already done</span>'
    extras = []
    if step.fallback:
        extras.append(f"fallback: {step.fallback}")
    if step.deviation:
        extras.append("deviation from the page")
    if step.step_done:
        extras.append("step done")
    caption = (f"<b>#{step.index + 1}</b> {_e(action_caption(step.action))}{instruction}{status}"
               + (f'<br><span class="muted">{_e(", ".join(extras))}</span>' if extras else ""))
    shot = shots.get((page.anchor, step_shot(step.index))) if step.screenshot else None
    image = _img(shot, action_caption(step.action)) if shot else '<p class="muted small">no screenshot</p>'
    css = "shot" + ("" if step.ok else " failed")
    return f'<figure class="{css}">{image}<figcaption>{caption}</figcaption></figure>'


# --- the page -------------------------------------------------------------------------------

def render_html(data: ReportData, shots: Shots, title: str = "verirank report") -> str:
    """The whole report as one HTML document."""
    model_name = (data.summary or {}).get("system") or "model"
    parts = [_cards(data)]
    if data.summary:
        parts.append("<h2>Evaluation</h2>" + summary_table(data.summary))
    parts.append("<h2>Queries</h2>" + _toc(data))
    parts += [_query_section(q, shots, model_name) for q in data.queries]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{_e(title)}</title><style>{CSS}</style></head><body>"
        f'{_header(data, title)}<main>{"".join(parts)}</main></body></html>\n'
    )
