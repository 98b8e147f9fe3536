"""Stage 1 on real text in other markups of the same structures: does the reading hang on one markup?

    .venv/bin/python -m benchmarks.bench_markup_variants [--variants split_ol span_numbers ...]

``benchmarks/real_dev_pages.py`` draws each structure in a few markups. Real
sites write the same structures in many more: a list split into one
``<ol start=N>`` per step with a screenshot between, step numbers in a
``<span>``, a collapsed answer hidden by ``aria-hidden`` or by a script's
``display: none``, a schema.org ``HowToStep`` per step, a table with a
screenshot column. This renders the 89 real-dev texts whose labelled steps
are the whole text in each such markup (with the same site furniture) and
counts the texts whose steps stage 1 finds whole (``extraction/stepmatch.py``).
Only the markup differs between variants, so a variant far below the others
is a markup stage 1 does not read.

It also counts false extractions on multi-tip pages that lack the query's tip:
for each labelled text, a listicle and an FAQ made of four other tasks' real
steps, under the text's query. Any steps there are another task's.

Writes benchmarks/results/markup_variants.json.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Callable

from benchmarks.real_dev_pages import (RenderedPage, Text, _answer, _chrome, _e, _groups, _intro, _others, _paragraphs,
                                       _task_title, load_texts)

RESULTS = Path(__file__).resolve().parent.parent / "benchmarks" / "results" / "markup_variants.json"


def _question(text: Text) -> str:
    return f"How do I {_e(_task_title(text.query).lower())}?"


def _ps(sentences) -> str:
    return "".join(f"<p>{_e(s)}</p>" for s in sentences)


def _items(sentences) -> str:
    return "".join(f"<li>{_e(s)}</li>" for s in sentences)


# each variant: the text's sentences in one markup (the article body under the page title)
VARIANTS: dict[str, Callable[[Text], str]] = {
    "ul": lambda t: f"<ul>{_items(t.sentences)}</ul>",
    "split_ol": lambda t: "".join(
        f"<ol start='{n}'><li>{_e(s)}</li></ol><figure><img src='s{n}.png' alt=''>"
        f"<figcaption>Screenshot {n}</figcaption></figure>" for n, s in enumerate(t.sentences, 1)),
    "nested_items": lambda t: "<ol>" + "".join(
        f"<li>{_e(g[0])}" + (f"<ul>{_items(g[1:])}</ul>" if len(g) > 1 else "") + "</li>"
        for g in _groups(t.sentences)) + "</ol>",
    "bold_titled_items": lambda t: "<ol>" + "".join(
        f"<li><p><strong>{_e(g[0])}</strong></p>{_ps(g[1:])}</li>" for g in _groups(t.sentences)) + "</ol>",
    "span_numbers": lambda t: "<div class='steps'>" + "".join(
        f"<p><span class='num'>{n}</span> {_e(s)}</p>" for n, s in enumerate(t.sentences, 1)) + "</div>",
    "paren_numbers": lambda t: "".join(f"<p>{n}) {_e(s)}</p>" for n, s in enumerate(t.sentences, 1)),
    "br_numbered": lambda t: "<p>" + "<br>".join(f"{n}. {_e(s)}" for n, s in enumerate(t.sentences, 1)) + "</p>",
    "br_lines": lambda t: "<p>" + "<br>".join(_e(s) for s in t.sentences) + "</p>",
    "step_colon_headings": lambda t: "".join(
        f"<h3>Step {n}: {_e(g[0])}</h3>{_ps(g[1:])}" for n, g in enumerate(_groups(t.sentences), 1)),
    "step_dash_headings": lambda t: "".join(
        f"<h3>Step {n} – {_e(g[0])}</h3>{_ps(g[1:])}" for n, g in enumerate(_groups(t.sentences), 1)),
    "bold_step_labels": lambda t: "".join(
        f"<p><strong>Step {n}:</strong> {_e(' '.join(g))}</p>" for n, g in enumerate(_groups(t.sentences), 1)),
    "div_step_titles": lambda t: "".join(
        f"<div class='step'><div class='step-title'>Step {n}</div><div class='step-body'>{_ps(g)}</div></div>"
        for n, g in enumerate(_groups(t.sentences), 1)),
    "section_headings": lambda t: "".join(
        f"<section><h2>{n}. {_e(g[0])}</h2>{_ps(g[1:])}</section>" for n, g in enumerate(_groups(t.sentences), 1)),
    "howto_schema": lambda t: "<div itemscope itemtype='https://schema.org/HowTo'>" + "".join(
        f"<div itemprop='step' itemscope itemtype='https://schema.org/HowToStep'><div itemprop='text'>"
        f"{_e(' '.join(g))}</div></div>" for g in _groups(t.sentences)) + "</div>",
    "table_three_columns": lambda t: "<table><tr><th>Step</th><th>Action</th><th>Notes</th></tr>" + "".join(
        f"<tr><td>{n}</td><td>{_e(g[0])}</td><td>{_e(' '.join(g[1:]))}</td></tr>"
        for n, g in enumerate(_groups(t.sentences), 1)) + "</table>",
    "table_row_headers": lambda t: "<table><thead><tr><th>Step</th><th>Instruction</th></tr></thead><tbody>" + "".join(
        f"<tr><th scope='row'>{n}</th><td>{_e(s)}</td></tr>" for n, s in enumerate(t.sentences, 1))
        + "</tbody></table>",
    "table_screenshots": lambda t: "<table><tr><th>Step</th><th>Instruction</th><th>Screenshot</th></tr>" + "".join(
        f"<tr><td>{n}</td><td>{_e(s)}</td><td><img src='i{n}.png' alt='Screenshot of step {n}'></td></tr>"
        for n, s in enumerate(t.sentences, 1)) + "</table>",
    "table_one_column": lambda t: f"<table><tr><th>Instructions</th></tr>{''.join(f'<tr><td>{_e(s)}</td></tr>' for s in t.sentences)}</table>",
    "accordion_bootstrap": lambda t: (
        f"<div class='accordion'><h3 class='accordion-header'><button class='accordion-button collapsed'>{_question(t)}"
        f"</button></h3><div class='accordion-collapse collapse' style='display:none'><div class='accordion-body'>"
        f"{_ps(t.sentences)}</div></div></div>"),
    "accordion_aria_hidden": lambda t: (
        f"<div class='faq'><div class='q' role='button' aria-expanded='false'>{_question(t)}</div>"
        f"<div class='a' aria-hidden='true'><ol>{_items(t.sentences)}</ol></div></div>"),
    "accordion_script": lambda t: (
        f"<div class='faq'><h3 class='faq-question'>{_question(t)}</h3>"
        f"<div class='faq-answer' style='display: none;'>{_ps(t.sentences)}</div></div>"),
    "accordion_toggle": lambda t: (
        f"<div class='toggle'><div class='toggle-title'><span>{_question(t)}</span></div>"
        f"<div class='toggle-content' style='display:none'><ol>{_items(t.sentences)}</ol></div></div>"),
    "tabs": lambda t: (
        "<div class='tabs'><ul role='tablist'><li role='tab'>iPhone</li><li role='tab'>Android</li></ul>"
        "<div role='tabpanel' hidden><p>Open the Settings app on your iPhone and tap General.</p></div>"
        f"<div role='tabpanel'><ol>{_items(t.sentences)}</ol></div></div>"),
    "tip_box_after": lambda t: (
        f"<ol>{_items(t.sentences)}</ol><div class='tip'><p><strong>Tip:</strong> You can also search for the "
        "setting by name in the Settings search bar.</p></div>"),
}


def render_variant(text: Text, variant: str) -> RenderedPage:
    rng = random.Random(f"{text.pid}-{variant}")
    title = f"How to {_task_title(text.query).lower()}"
    main = f"<article><h1>{_e(title)}</h1>{_intro(text)}{VARIANTS[variant](text)}</article>"
    return RenderedPage(text, variant, _chrome(rng, title, main))


def render_without_the_tip(text: Text, texts: list[Text], kind: str) -> RenderedPage:
    """A listicle or an FAQ of four other tasks' labelled steps: nothing on it answers the query."""
    rng = random.Random(f"{text.pid}-{kind}-without")
    return render_tips(text, _others(text, texts, rng, 4), kind, rng)


def render_tips(text: Text, tips: list[Text], kind: str, rng: random.Random) -> RenderedPage:
    """A listicle or an FAQ of ``tips`` (each text's labelled steps under its task's title), for
    ``text``'s query."""
    if kind == "listicle":
        title = f"{len(tips)} Android settings tips everyone should know"
        body = "".join(f"<h2>{n}. {_e(_task_title(o.query))}</h2>{_paragraphs(o.steps, rng)}"
                       for n, o in enumerate(tips, 1))
    else:
        title = "Android settings: frequently asked questions"
        body = "".join(f"<div class='faq-item'><h3>{_question(o)}</h3><div class='faq-answer'>"
                       f"{_answer(o.steps, rng)}</div></div>" for o in tips)
    return RenderedPage(text, f"{kind}_tips", _chrome(rng, title, f"<article><h1>{title}</h1>{body}</article>"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--quick", action="store_true", help="every third text only")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    every = load_texts()
    texts = [t for t in every if t.steps and len(t.steps) == len(t.sentences)][::3 if args.quick else 1]
    if not texts:
        print("skipped: no real-dev texts")
        return 0
    from benchmarks.bench_steps_real import Stage1

    stage1 = Stage1()
    results: dict[str, dict] = {}
    for variant in args.variants:
        outcomes = [stage1.run(render_variant(t, variant)) for t in texts]
        found = sum(o.strict for o in outcomes)
        results[variant] = {"whole_found": found, "texts": len(texts), "share": round(found / len(texts), 3),
                            "missed": [o.pid for o in outcomes if not o.strict]}
        print(f"{variant:<24} {found:>3}/{len(texts)}", flush=True)
    labelled = [t for t in every if t.steps][::3 if args.quick else 1]
    without: dict[str, dict] = {}
    for kind in ("listicle", "faq"):
        outcomes = [stage1.run(render_without_the_tip(t, every, kind)) for t in labelled]
        false = sum(bool(o.steps) for o in outcomes)
        without[kind] = {"false_extractions": false, "pages": len(outcomes), "share": round(false / len(outcomes), 3)}
        print(f"{kind + ' without the tip':<24} {false:>3}/{len(outcomes)} pages got another task's steps", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"benchmark": "markup_variants", "quick": args.quick, "variants": results,
                                    "without_the_tip": without}, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
