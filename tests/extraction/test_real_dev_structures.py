"""Stage 1 on real help-site texts, rendered into every page structure it reads.

The texts are ``../shared/real-dev/pages.jsonl`` (real pages' instructions,
each labelled by a person with the sentences that are instructions for the
task); ``benchmarks/real_dev_pages.py`` puts a text's sentences into a page of
one structure with site furniture around it. The truth is the person's label,
never this extractor's output: the steps must be found whole (ROUGE-L recall
>= 0.8, precision >= 0.5), and texts that are not instructions at all
(``variant == "unrelated"``) must give none. A fixed sample (every 12th text
with labelled steps) keeps the test fast; ``benchmarks/bench_steps_real.py``
runs all 185 texts.
"""

from __future__ import annotations

import html

import pytest

from benchmarks.real_dev_pages import STRUCTURES, applies, has_menu_path, load_texts, render

TEXTS = load_texts()
pytestmark = pytest.mark.skipif(not TEXTS, reason="../shared/real-dev is not available")
LABELLED = [t for t in TEXTS if t.steps][::12]
UNRELATED = [t for t in TEXTS if t.variant == "unrelated"]


@pytest.fixture(scope="module")
def stage1():
    from benchmarks.bench_steps_real import Stage1

    return Stage1()


@pytest.fixture(scope="module")
def outcomes(stage1):
    pages = [render(t, s, TEXTS) for s in STRUCTURES for t in LABELLED + UNRELATED if applies(t, s)]
    return [stage1.run(p) for p in pages]


def test_the_sample_covers_every_structure_and_both_kinds_of_text():
    assert len(LABELLED) >= 8 and len(UNRELATED) >= 2
    assert sum(has_menu_path(t) for t in LABELLED) >= 3  # enough texts for the breadcrumb structure


def test_the_page_shows_the_sentences_not_the_labels():
    text = next(t for t in TEXTS if t.steps and len(t.steps) < len(t.sentences))
    for structure in STRUCTURES:
        page = render(text, structure, TEXTS)
        unlabelled = next(s for s in text.sentences if s not in text.steps)
        assert html.escape(unlabelled, quote=False) in page.html  # the whole text is there, labelled or not
        assert "<nav" in page.html or "breadcrumbs" in page.html  # with site furniture around it


@pytest.mark.parametrize("structure", STRUCTURES)
def test_labelled_steps_are_found_whole(structure, outcomes):
    rows = [o for o in outcomes if o.structure == structure and o.labelled]
    assert rows
    missed = [(o.pid, round(o.recall, 2), round(o.precision, 2), o.reason) for o in rows if not o.strict]
    assert len(missed) <= 0.1 * len(rows), missed


@pytest.mark.parametrize("structure", STRUCTURES)
def test_texts_that_are_not_instructions_give_no_steps(structure, outcomes):
    false = [(o.pid, o.steps[:2]) for o in outcomes if o.structure == structure and o.variant == "unrelated"
             and o.steps]
    assert not false, false
