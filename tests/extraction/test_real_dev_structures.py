"""Stage 1 on real help-site texts, rendered into every page structure it reads.

The texts are ``../shared/real-dev/pages.jsonl`` (real pages' instructions,
each labelled by a person with the sentences that are instructions for the
task); ``benchmarks/real_dev_pages.py`` puts a text's sentences into a page of
one structure with site furniture around it. The truth is the person's label,
never this extractor's output: the steps must be found whole (ROUGE-L recall
>= 0.8, precision >= 0.5), and a text that holds no instructions at all
must give none. A fixed sample (every 15th text with labelled steps) keeps
the test fast; ``benchmarks/bench_steps_real.py`` runs all 185 texts.

The floors below guard what is reached (2026-11-25: 58 of 69 sample pages
found whole; 2026-11-27: 67 of 69); the goal, 0.9 in every structure over
all texts, is the benchmark's target and not yet met (see docs/extraction.md).
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest

from benchmarks.real_dev_pages import STRUCTURES, _groups, applies, has_menu_path, load_texts, render

REPO = Path(__file__).resolve().parents[2]
TEXTS = load_texts()
pytestmark = pytest.mark.skipif(not TEXTS, reason="../shared/real-dev is not available")
LABELLED = [t for t in TEXTS if t.steps][::15]
UNRELATED = [t for t in TEXTS if t.variant == "unrelated"]
#: read by a person: a comment thread about VPNs and Netflix, not one instruction in it
#: (the other two unrelated texts are instructions, for other tasks: Tor, PingTools)
NO_INSTRUCTIONS = ["dB01-t06"]


@pytest.fixture(scope="module")
def stage1():
    from benchmarks.bench_steps_real import Stage1

    return Stage1()


@pytest.fixture(scope="module")
def outcomes(stage1):
    pages = [render(t, s, TEXTS) for s in STRUCTURES for t in LABELLED + UNRELATED if applies(t, s)]
    return [stage1.run(p) for p in pages]


def test_the_sample_covers_every_structure_and_both_kinds_of_text():
    assert len(LABELLED) >= 8 and {t.pid for t in UNRELATED} >= set(NO_INSTRUCTIONS)
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
    assert len(missed) <= 0.25 * len(rows), missed


def test_most_labelled_steps_are_found_whole_over_all_structures(outcomes):
    rows = [o for o in outcomes if o.labelled]
    assert sum(o.strict for o in rows) >= 0.9 * len(rows)
    # and nearly always some steps: a page with steps is not dropped (for its platform or its shape)
    assert sum(bool(o.steps) for o in rows) >= 0.95 * len(rows)


@pytest.mark.parametrize("structure", STRUCTURES)
def test_a_text_without_instructions_gives_no_steps(structure, outcomes):
    false = [(o.pid, o.steps[:2]) for o in outcomes if o.structure == structure and o.pid in NO_INSTRUCTIONS
             and o.steps]
    assert not false, false


def test_an_iphone_page_is_kept_for_an_android_device_with_its_platform_recorded(stage1):
    """The device decides whether steps work; the page's stated platform is data for the ranker."""
    from extraction.pipeline import extract_one
    from verirank_core.extraction_records import ExtractionStatus, FetchStatus, Page, Query

    text = next(t for t in TEXTS if t.steps and t.platform.startswith("iPhone")
                and any("iPhone" in s for s in t.steps))
    # an iPhone site's page: its title names the iPhone, its list holds the real text
    items = "".join(f"<li>{html.escape(s)}</li>" for s in text.sentences)
    page = (f"<html><head><title>iPhone tips: {html.escape(text.query[7:])}</title></head><body><article>"
            f"<h1>On your iPhone</h1><ol>{items}</ol></article></body></html>")
    rec = extract_one(Page(qid=text.qid, url="http://site.test/iphone", rank=1, status=FetchStatus.OK),
                      Query(qid=text.qid, query=text.query, app=text.app, device=text.device),
                      page.encode(), stage1.extractor, stage1.encoder, stage1.config)
    assert "android" in text.device or "oneplus" in text.device  # an Android phone runs the steps
    assert rec.status == ExtractionStatus.OK, rec.reason
    assert rec.stated_platform == "ios" and "written for ios" in rec.reason


def test_every_working_text_on_a_plain_list_page_gives_steps(stage1):
    """The whole-chain rendering (``render_plain.py``: one ``<ol>`` of the labelled steps) never loses
    a text that works on the device at stage 1: wiki crawls' reference marks ("[3] Open the
    Settings app") and image captions must not hide an instruction."""
    import json

    from benchmarks.real_dev_pages import REAL_DEV
    from extraction.clean import clean_page
    from verirank_core.extraction_records import Query

    tasks = {t.qid: t for t in TEXTS}
    rows = [json.loads(line) for line in (REAL_DEV / "pages.jsonl").read_text("utf-8").splitlines()]
    working = [r for r in rows if r["works_on_device"]]
    assert len(working) >= 15
    lost = []
    for r in working:
        task = tasks[r["qid"]]
        title = html.escape(f"How to {task.query.removeprefix('how to ')}")
        items = "".join(f"<li>{html.escape(s)}</li>" for s in r["steps"] or r["sentences"])
        page = clean_page(f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1><ol>{items}"
                          "</ol></article></body></html>".encode(), url="http://127.0.0.1/p", qid=r["qid"],
                          config=stage1.config.extraction.clean)
        out = stage1.extractor.extract(Query(qid=r["qid"], query=task.query, app=task.app, device=task.device), page)
        if not out.steps:
            lost.append((r["pid"], out.reason))
    assert not lost, lost


def _sentences_found(steps: list[str], sentences: list[str]) -> list[bool]:
    joined = " ".join(steps)
    return [s in joined for s in sentences]


@pytest.mark.parametrize("structure", ["qa", "accordion", "listicle"])
def test_an_answer_keeps_its_closing_sentences(structure, stage1):
    """dB06-t01 (a person labelled all six sentences as the steps) ends with sentences that tell
    what happens ("Your TV should immediately begin mirroring..."): as the last items of a list
    they are kept, and so they are when they stand in the answer's later paragraphs. (Its very
    last sentence, "...they will appear on your Samsung TV.", is an outcome: tidy makes it context.)"""
    text = next(t for t in TEXTS if t.pid == "dB06-t01")
    assert len(text.steps) == len(text.sentences) == 6
    out = stage1.run(render(text, structure, TEXTS))
    assert _sentences_found(out.steps, [text.sentences[-2]]) == [True], out.steps
    # the byline under the answer is not a sentence of it
    assert not any("answered by" in s for s in out.steps)


def test_sentences_after_the_last_action_stop_at_a_question_and_a_byline():
    from extraction.blocks import find_blocks
    from verirank_core.extraction_records import Snippet

    paragraphs = ["Open Settings and tap Display.", "Tap Dark theme.", "The screen turns dark right away.",
                  "answered by helper_pro", "Was this helpful?"]
    snippets = [Snippet(index=n, xpath=f"/html/body/div/p[{n + 1}]", text=t, tag="p")
                for n, t in enumerate(paragraphs)]
    prose = [b for b in find_blocks(snippets) if b.kind == "prose"]
    assert prose and prose[0].steps == paragraphs[:3]


def test_a_heading_that_goes_on_telling_belongs_to_the_steps_a_title_does_not(stage1):
    """Action headings ("Tap Permissions...") followed by a heading written as a sentence (dA04-t01's
    "Under "Location," you can find ...") keep it; a title such as "Troubleshooting" ends them."""
    from extraction.blocks import find_blocks
    from verirank_core.extraction_records import Snippet

    text = next(t for t in TEXTS if t.pid == "dA04-t01")
    out = stage1.run(render(text, "action_headings", TEXTS))
    assert _sentences_found(out.steps, [text.sentences[-2]]) == [True], out.steps
    heads = ["Open the Settings app.", "Tap Display.", "Tap Dark theme.", "Troubleshooting"]
    snippets = [Snippet(index=n, xpath=f"/html/body/article/div[{n + 1}]/h3", text=t, tag="h3")
                for n, t in enumerate(heads)]
    blocks = [b for b in find_blocks(snippets) if b.kind == "headings"]
    assert blocks and blocks[0].steps == heads[:3]


@pytest.mark.parametrize("pid", ["dA08-t01", "dC05-t04"])
def test_one_action_heading_whose_siblings_go_on_telling_holds_the_whole_answer(pid, stage1):
    """dA08-t01 and dC05-t04 as action headings have one action heading ("Go to Settings >
    Accessibility > Spoken Content.") and sibling headings that go on telling ("Speaking Rate: Drag
    the slider."): the steps are all of them, not the first heading's body alone."""
    text = next(t for t in TEXTS if t.pid == pid)
    out = stage1.run(render(text, "action_headings", TEXTS))
    assert out.strict, (out.recall, out.precision, out.steps)


def test_one_action_heading_over_a_comment_thread_gives_no_steps(stage1):
    """Sibling headings under one sentence that reads as an action only hold a better block; they
    never win alone. Real comment threads and product blurbs have that shape (real-dev3's hC05-t05:
    "You can get an excellent, high quality, great product ..." above a thread about USB keyboards;
    real-dev2's hA04-t06: "Remove AirPods from their case." above what AirPods do)."""
    from extraction.blocks import find_blocks
    from verirank_core.extraction_records import Snippet

    for folder, pid in (("real-dev3", "hC05-t05"), ("real-dev2", "hA04-t06")):
        texts = load_texts(REPO / "datasets" / folder)
        text = next(t for t in texts if t.pid == pid)
        out = stage1.run(render(text, "action_headings", texts))
        assert not out.steps, (pid, out.reason, out.steps)
    heads = ["Remove the case.", "They are on when they leave it.", "Each one has a sensor in it."]
    snippets = [Snippet(index=n, xpath=f"/html/body/article/div[{n + 1}]/h3", text=t, tag="h3")
                for n, t in enumerate(heads)]
    held = [b for b in find_blocks(snippets) if b.kind == "headings"]
    assert [b.steps for b in held] == [heads] and held[0].holder_only


@pytest.mark.parametrize("structure", ["paragraph", "ol"])
def test_a_wikihow_text_told_as_one_paragraph_reads_as_instructions(structure, stage1):
    """dB02-t04 (wikiHow, a working text) in one paragraph, or one sentence per list item as
    crawled: every step is an instruction and one or two sentences about it ("It's under the
    Personal header."), so only a third of its sentences are instructions. Read a step at a time
    it is a how-to; a news paragraph with one "Click here" in it is not."""
    from extraction.heuristic import _told_steps_howto

    text = next(t for t in TEXTS if t.pid == "dB02-t04")
    out = stage1.run(render(text, structure, TEXTS))
    assert out.steps, out.reason
    assert any("Screen Lock" in s for s in out.steps)
    news = ["The company reported higher sales.", "Analysts expected less.", "Shares rose 4%.",
            "The chief executive spoke on Monday.", "Click here to subscribe.", "Markets closed higher."]
    assert _told_steps_howto(news) < 0.5


def test_a_paragraph_of_one_chained_instruction_keeps_the_sentences_around_it(stage1):
    """dC02-t02 (a working text, all three sentences labelled) is one paragraph with a single
    instruction, a chain of two taps, between "Opening the Settings app." and what the reader
    then sees. The sentences around one chained instruction belong to it, as they do to a run of
    instructions; a paragraph with no chain of actions on named controls still gives nothing."""
    from extraction.blocks import _instruction_sentences

    text = next(t for t in TEXTS if t.pid == "dC02-t02")
    out = stage1.run(render(text, "paragraph", TEXTS))
    assert _sentences_found(out.steps, text.sentences) == [True, True, True], out.steps
    remark = "Dark themes are popular. Just follow the guide and read our other articles. It is easy."
    assert _instruction_sentences(remark) == []


def _page(text, main: str):
    from benchmarks.real_dev_pages import RenderedPage

    return RenderedPage(text, "ol", f"<html><body><article><h1>{html.escape(text.query)}</h1>{main}</article></body></html>")


def test_a_list_split_by_screenshots_is_read_as_one_list(stage1):
    """Editors put a screenshot between steps, so each step is its own <ol start=N>."""
    text = next(t for t in TEXTS if t.pid == "dA04-t01")
    main = "".join(f"<ol start='{n}'><li>{html.escape(s)}</li></ol><figure><img src='s{n}.png' alt=''>"
                   f"<figcaption>Screenshot {n}</figcaption></figure>" for n, s in enumerate(text.sentences, 1))
    out = stage1.run(_page(text, main))
    assert out.strict, (out.recall, out.precision, out.steps)


def test_two_lists_under_a_line_naming_another_phone_stay_apart():
    from extraction.blocks import find_blocks
    from verirank_core.extraction_records import Snippet

    rows = [("/html/body/ol[1]/li", "Open Settings."), ("/html/body/p[1]", "Screenshot: Google"),
            ("/html/body/ol[2]/li", "Tap Display."), ("/html/body/p[2]", "For Samsung phones"),
            ("/html/body/ol[3]/li", "Tap Display and brightness.")]
    snippets = [Snippet(index=n, xpath=x, text=t, tag=x.rsplit("/", 1)[1]) for n, (x, t) in enumerate(rows)]
    lists = [b.steps for b in find_blocks(snippets) if b.kind == "list"]
    assert ["Open Settings.", "Tap Display."] in lists  # a credit line does not split a list
    assert not any("Tap Display and brightness." in steps and "Tap Display." in steps for steps in lists)


def test_a_steps_remarks_as_nested_items_stay_with_it(stage1):
    """A step's further sentences as sub-items ("It's under the Personal header.") are part of
    the step, not lost; nested actions stay steps of their own."""
    from extraction.blocks import find_blocks
    from verirank_core.extraction_records import Snippet

    text = next(t for t in TEXTS if t.pid == "dA07-t02")
    assert len(text.steps) == len(text.sentences)
    groups = _groups(text.sentences)  # a step starts at a sentence that reads like an action
    assert any(len(g) > 1 for g in groups)
    main = "<ol>" + "".join(f"<li>{html.escape(g[0])}" + ("<ul>" + "".join(
        f"<li>{html.escape(s)}</li>" for s in g[1:]) + "</ul>" if len(g) > 1 else "") + "</li>" for g in groups) + "</ol>"
    out = stage1.run(_page(text, main))
    assert all(_sentences_found(out.steps, text.sentences)), out.steps
    rows = [("/html/body/ol/li[1]", "Go to Settings:"), ("/html/body/ol/li[1]/ul/li[1]", "Tap Network."),
            ("/html/body/ol/li[1]/ul/li[2]", "Tap Wi-Fi.")]
    snippets = [Snippet(index=n, xpath=x, text=t, tag="li") for n, (x, t) in enumerate(rows)]
    lists = [b.steps for b in find_blocks(snippets) if b.kind == "list"]
    assert ["Go to Settings:", "Tap Network.", "Tap Wi-Fi."] in lists


def test_a_page_of_one_step_heading_reads_its_instruction_from_the_heading(stage1):
    """dB07-t04 as action headings is one heading, "Go to Settings , then tap Wi-Fi on your other
    iPhone...", over "Below My Networks, choose your iPhone network.": the heading is the first
    instruction. A heading that is a title ("Turn on Dark theme", no full stop) is not a step."""
    from extraction.blocks import find_blocks
    from verirank_core.extraction_records import Snippet

    text = next(t for t in TEXTS if t.pid == "dB07-t04")
    out = stage1.run(render(text, "action_headings", TEXTS))
    assert out.strict, (out.steps, out.reason)
    rows = [("h3", "Turn on Dark theme"), ("p", "Open Settings."), ("p", "Tap Display.")]
    snippets = [Snippet(index=n, xpath=f"/html/body/div/{tag}[{n + 1}]", text=t, tag=tag)
                for n, (tag, t) in enumerate(rows)]
    runs = [b.steps for b in find_blocks(snippets) if b.kind == "imperative"]
    assert runs and all("Turn on Dark theme" not in steps for steps in runs), runs


def test_the_last_numbered_heading_keeps_the_paragraph_that_tells_what_it_does(stage1):
    """dC04-t04 as "N. step" headings with no bodies until the last: "With Auto-Correction off,
    your iPhone or iPad will stop automatically changing..." belongs to step 4, as it would as
    the list's last item."""
    text = next(t for t in TEXTS if t.pid == "dC04-t04")
    out = stage1.run(render(text, "step_headings", TEXTS))
    assert "numbered" in out.reason
    assert "With Auto-Correction off" in out.steps[-1], out.steps
    assert out.strict, (out.recall, out.precision)


@pytest.mark.parametrize("structure", ["ol", "step_headings"])
def test_another_devices_part_of_a_page_is_left_out(structure, stage1):
    """dC07-t01 (Apple's RTT page) tells the iPhone's part, then "On your Mac, choose Apple menu >
    System Preferences ...". A person labelled only the phone's four sentences: the Mac's part
    cannot be followed on a phone, and with it the page's steps were twice the labelled ones."""
    text = next(t for t in TEXTS if t.pid == "dC07-t01")
    mac = text.sentences.index(next(s for s in text.sentences if s.startswith("On your Mac")))
    assert text.sentences[mac] not in text.steps  # the person's label, read from the file
    out = stage1.run(render(text, structure, TEXTS))
    assert not any("Mac" in s or "Enable RTT" in s for s in out.steps), out.steps
    assert "another device" in out.reason
    assert out.strict, (out.recall, out.precision)


def test_the_other_device_section_ends_where_the_page_is_back_on_the_phone():
    from extraction.tidy import phone_part

    steps = ["Open Settings and tap Connected devices.", "On your TV, choose the HDMI input.", "Press OK.",
             "On your Android phone, tap Cast.", "Tap the TV's name."]
    assert phone_part(steps) == ([steps[0], steps[3], steps[4]], steps[1:3])
    # a page that starts on the computer has no phone part before it to keep apart
    first = ["On your computer, go to voice.google.com.", "Click Settings.", "On your Android phone, tap the link."]
    assert phone_part(first) == (first, [])


@pytest.mark.parametrize("structure", ["paragraph", "qa", "listicle"])
def test_an_instruction_after_a_place_below_a_heading_is_a_step(structure, stage1):
    """dB07-t04's second sentence, "Below My Networks, choose your iPhone network.", is an
    instruction after a place, as "Under Wireless, tap More." is; it was dropped as prose."""
    from extraction.blocks import is_imperative

    text = next(t for t in TEXTS if t.pid == "dB07-t04")
    assert is_imperative(text.sentences[1]) and not is_imperative("Below the list, the phone shows a map.")
    out = stage1.run(render(text, structure, TEXTS))
    assert _sentences_found(out.steps, text.steps) == [True, True], out.steps


@pytest.mark.parametrize("structure", ["accordion", "forum", "action_headings"])
def test_a_look_at_a_place_is_the_last_step(structure, stage1):
    """real-dev5's hE03-t06 (T-Mobile, Samsung storage; labelled working) ends "Under 'Device
    Memory,' view the following: Total space ...": a place, then what to look at. "View" alone
    starts a site's menu lines ("View more"), so only "view" after a place counts."""
    from extraction.blocks import is_imperative

    texts = load_texts(REPO / "datasets" / "real-dev5")
    text = next(t for t in texts if t.pid == "hE03-t06")
    assert is_imperative(text.sentences[-1])
    assert not is_imperative("View more") and not is_imperative("View the call logs.")
    out = stage1.run(render(text, structure, texts))
    assert out.strict and out.steps[-1] == text.sentences[-1], out.steps


def test_a_forum_answer_is_read_without_the_thread_around_it(stage1):
    """A thread: the question post ("I went into Settings but can't find it"), a reply asking which
    phone, the answer with a signature, and the asker quoting the answer's first line. A working
    text (dB04-t01, twelve sentences) is found whole, from the answer, in each way a post is typed."""
    text = next(t for t in TEXTS if t.pid == "dB04-t01")
    assert len(text.steps) == len(text.sentences)
    styles = set()
    for seed in range(8):
        page = render(text, "forum", TEXTS, seed=seed)
        styles.add("<br>" in page.html)
        out = stage1.run(page)
        assert out.strict, (seed, out.recall, out.precision, out.reason)
        assert not any("sent from my phone" in s or "Thanks" in s or "wrote:" in s for s in out.steps)
    assert styles == {True, False}  # lines split by <br> and paragraphs or a list


def test_a_tip_whose_steps_name_the_querys_words_does_not_answer_it(stage1):
    """Text-to-speech steps go through "Language & input": they name the language query's word,
    yet under their own title they answer another task. With the query's tip on the page, its
    steps are the answer."""
    import random

    from benchmarks.bench_markup_variants import render_tips

    by_pid = {t.pid: t for t in TEXTS}
    language = by_pid["dC03-t01"]
    others = [by_pid[p] for p in ("dC05-t02", "dA07-t01", "dB02-t01", "dC08-t01")]
    out = stage1.run(render_tips(language, others, "listicle", random.Random(0)))
    assert out.steps == [], out.reason
    out = stage1.run(render_tips(language, others[:2] + [language] + others[2:], "listicle", random.Random(0)))
    assert out.strict, (out.recall, out.precision, out.steps)


def test_few_pages_of_other_tasks_tips_give_steps(stage1):
    """A listicle or an FAQ of four other tasks' real steps holds no answer to the query. The floor
    guards what is reached: 1 of 60 pages in this sample gives steps (2026-11-28; 10 before a tip's
    heading had to name the query's task, not a neighbour's such as "turn on wifi and connect" for
    "wifi calling"; 23 before tips were judged by their titles). The one left is a query told only
    in weak words ("notifications for one app")."""
    from benchmarks.bench_markup_variants import render_without_the_tip

    sample = [t for t in TEXTS if t.steps][::4]
    outcomes = [stage1.run(render_without_the_tip(t, TEXTS, kind)) for t in sample for kind in ("listicle", "faq")]
    false = [o.pid for o in outcomes if o.steps]
    assert len(outcomes) == 60 and len(false) <= 1, false


@pytest.mark.parametrize("structure", ["table", "accordion"])
def test_a_long_wikihow_text_is_kept_whole_in_prose_structures(structure, stage1):
    """dB01-t02 (wikiHow, "Connect to a VPN" on iOS; all 43 sentences labelled as the steps): a
    prose or table rendering gives one step per sentence, and a cap of 30 steps cut off its last
    third. The cap is above such a text now; execution still stops at its own 28 actions."""
    from extraction.stepmatch import MIN_RECALL

    text = next(t for t in TEXTS if t.pid == "dB01-t02")
    assert len(text.steps) == len(text.sentences) >= 40
    out = stage1.run(render(text, structure, TEXTS))
    assert len(out.steps) > 30 and out.recall >= MIN_RECALL, (len(out.steps), out.recall, out.reason)


def test_a_wikihow_text_with_the_answer_in_one_half_is_read_from_that_half(stage1):
    """dC02-t06 (wikiHow, watching YouTube on an iPod) under action headings: its first half tells
    where the version is ("Click on Settings", "Select About"), the second plays a video. Both
    halves sit under the page's title heading; the steps came from the video half."""
    text = next((t for t in TEXTS if t.pid == "dC02-t06"), None)
    if text is None:
        pytest.skip("dC02-t06 is not in this copy of real-dev")
    out = stage1.run(render(text, "action_headings", TEXTS))
    assert out.recall >= 0.8 and not any("Open YouTube" in s for s in out.steps), (out.reason, out.steps[:2])


@pytest.mark.parametrize("structure", ["accordion", "qa", "forum"])
def test_an_options_name_before_what_to_do_with_it_is_an_instruction(structure, stage1):
    """real-dev's dC05-t04 (Apple, Spoken Content; labelled as steps) lists options as "Voices: Choose
    a voice and dialect." and "Speaking Rate: Drag the slider.": an option's name, then what to do.
    Read as no instruction, the prose answer ended four sentences short (recall 0.72)."""
    from extraction.blocks import is_imperative

    assert is_imperative("Voices: Choose a voice and dialect.") and is_imperative("Speaking Rate: Drag the slider.")
    # the label may be the instruction itself, a note is an aside, and one word after a label is a value
    assert is_imperative("Choose from the following: Off, Voice & Data, Data Only")
    assert not is_imperative("Note: Tap OK to go on.") and not is_imperative("Screen lock: Pin.")
    text = next(t for t in TEXTS if t.pid == "dC05-t04")
    out = stage1.run(render(text, structure, TEXTS))
    assert out.strict and out.recall >= 0.95, (out.recall, out.steps)
