"""Real-text pages (``benchmarks/real_text.py``) and the structure-agreement benchmark's verdicts."""

from __future__ import annotations

import pytest

from benchmarks.bench_structure_agreement import compare
from benchmarks.real_dev_pages import render
from benchmarks.real_text import REAL_TEXT, load_real_texts, query_of, split_steps

needs_real_text = pytest.mark.skipif(not REAL_TEXT.exists(), reason="needs ../shared/real-text")


def test_the_question_a_url_names():
    assert query_of("https://www.lifewire.com/how-to-use-the-yahoo-app-on-android-4781598") == \
        "how to use the yahoo app on android"
    assert query_of("https://www.wikihow.com/Use-the-Steam-App-on-Android") == "how to use the steam app on android"
    assert query_of("https://www.htc.com/us/support/htc-one-m8/howto/adding-a-new-contact.html") == \
        "how to adding a new contact"


def test_a_crawl_is_split_into_the_sentences_a_reader_sees():
    text = ("Image titled Steam 22.png 1 Tap . It's in the menu on the left-hand side of the screen. "
            "Image titled Steam 21.png 2 Tap Friends. Advertisement Done!")
    assert split_steps(text) == ["Tap .", "It's in the menu on the left-hand side of the screen.", "Tap Friends.",
                                 "Done!"]


def test_verdicts_against_the_list_page():
    reference = ["Open Settings.", "Tap Display.", "Turn on Dark theme."]
    assert compare(reference, list(reference)) == "agree"
    assert compare(reference, ["Open Settings."]) == "fewer"
    assert compare(reference, reference + [f"Read note {n} about the weather today." for n in range(8)]) == "more"
    assert compare(reference, []) == "none"
    assert compare([], ["Open Settings."]) == "only_here"
    assert compare([], []) == "agree"


@needs_real_text
def test_real_texts_carry_no_labels_and_a_table_reads_as_the_list_does():
    texts = load_real_texts(12, seed=3)
    assert len(texts) == 12 and all(t.sentences and not t.steps for t in texts)
    assert all(t.query.startswith("how to ") for t in texts)

    from benchmarks.bench_steps_real import Stage1

    stage1 = Stage1()
    verdicts = [compare(stage1.run(render(t, "ol", texts)).steps, stage1.run(render(t, "table", texts)).steps)
                for t in texts]
    assert verdicts.count("agree") >= 11, verdicts
