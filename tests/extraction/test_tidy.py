"""Clean steps: outcomes and trailing notes become context, titles leave the step, crawl artefacts go.

The sentences below are real phrasing from ../shared/real-dev (help-site texts);
what counts as an outcome or an action was read by a person, not produced by
the code under test.
"""

from __future__ import annotations

import pytest

from extraction.blocks import find_blocks, heading_context, is_imperative, strip_marker
from extraction.tidy import is_aside, is_outcome, tidy_steps
from verirank_core.extraction_records import Snippet


def _snippets(*rows: tuple[str, str, str]) -> list[Snippet]:
    return [Snippet(index=i, xpath=x, tag=t, text=text) for i, (x, t, text) in enumerate(rows)]


@pytest.mark.parametrize("sentence", [
    "A confirmation message will appear.",
    "A new screen appears.",
    "The main screen appears with the new wallpaper.",
    "Once the encryption is complete, your phone or tablet will restart.",
])
def test_outcome_sentences(sentence):
    assert is_outcome(sentence)


@pytest.mark.parametrize("sentence", [
    "If a pop-up appears, tap OK.",  # the action after the condition is the point
    "If the finger is not able to be detected, a pop up asking you to move your finger will appear, tap CONTINUE .",
    "Tap Stop Casting in the box that appears.",
    "Open your phone's Settings app.",
    "It's at the top of the screen.",  # where to look: stays with the steps
])
def test_actions_and_hints_are_not_outcomes(sentence):
    assert not is_outcome(sentence)


def test_tidy_moves_outcomes_ending_an_action_and_trailing_notes_to_context():
    steps = ["Open Settings.", "Tap Reset. A confirmation message will appear.", "A new screen appears.",
             "Tap OK.", "Note : Location History works best when Location Services is set to Always .",
             "Optionally, tap Share."]
    kept, context = tidy_steps(steps)
    # an outcome standing as a step of its own is a sentence of the page's steps: it stays
    assert kept == ["Open Settings.", "Tap Reset.", "A new screen appears.", "Tap OK."]
    assert context == ["A confirmation message will appear.",
                       "Note : Location History works best when Location Services is set to Always .",
                       "Optionally, tap Share."]


def test_outcome_sentences_a_person_labelled_as_steps_stay_and_ask_the_agent_for_nothing():
    """real-dev's labels keep outcome sentences among the steps ("Your TV should immediately begin
    mirroring ..."). They stay steps, and stage 2 reads them as informational: no intent, so the agent
    does nothing for them and the judge leaves them out. (One crawled sentence also holds an action,
    "... Step 4 4 View the Easter egg.", and keeps it.)"""
    import json

    from benchmarks.real_dev_pages import REAL_DEV
    from execution.predict.steps import parse_step

    if not (REAL_DEV / "pages.jsonl").exists():
        pytest.skip("../shared/real-dev is not available")
    rows = [json.loads(line) for line in (REAL_DEV / "pages.jsonl").read_text("utf-8").splitlines()]
    outcomes = [s for r in rows for s in r["steps"] if is_outcome(s)]
    assert len(outcomes) >= 10
    assert all(tidy_steps(["Open Settings.", s, "Tap OK."])[0][1] == s for s in outcomes)
    acting = [s for s in outcomes if parse_step(s)]
    assert len(acting) <= 1 and all("View the Easter egg" in s for s in acting), acting


def test_tidy_keeps_a_note_between_steps_and_a_page_of_only_asides():
    steps = ["Tap Display.", "Note: on Android 9 it is called Theme.", "Tap Dark theme."]
    assert tidy_steps(steps) == (steps, [])
    assert tidy_steps(["Tip: hold the power key.", "Tip: or ask Google."])[0] == ["Tip: hold the power key.",
                                                                                   "Tip: or ask Google."]
    assert is_aside("(Optional) Enter a password.") and is_aside("Advertisement") and not is_aside("Tap Notes")


def test_crawl_artefacts_before_a_step_do_not_hide_it():
    assert strip_marker("[3] Open the Settings app, tap Security") == (None, "Open the Settings app, tap Security")
    # an image caption is page text (kept), but the instruction after it is read as one;
    # the caption's numbers are the crawl's, the page's own marker counts
    caption = "Image titled Stop Twitter Notifications Step 15 2 Scroll down and tap ."
    assert strip_marker(caption) == (None, caption) and is_imperative(caption)
    assert strip_marker("1. Image titled Check Data Usage on Android Step 1 1 Open your Android's Settings.")[0] == 1
    assert not is_imperative("Image titled Encrypt an Android Phone Step 2 2 It s under the Personal header.")


def test_a_disclosure_question_heads_its_answer():
    snippets = _snippets(("/html/body/h1", "h1", "Android settings: frequently asked questions"),
                         ("/html/body/details[1]/summary", "summary", "How do I turn on dark mode?"),
                         ("/html/body/details[1]/div/p", "p", "Open Settings."),
                         ("/html/body/details[2]/summary", "summary", "How do I change the wallpaper?"),
                         ("/html/body/details[2]/div/p", "p", "Long-press the home screen."))
    context = heading_context(snippets)
    assert context[2][-1] == "How do I turn on dark mode?"
    assert context[4][-1] == "How do I change the wallpaper?"  # the next question replaces it
    assert context[4][0] == "Android settings: frequently asked questions"


def test_a_step_title_over_an_instruction_body_becomes_context():
    # a help-centre list whose items are a bold title and a body (the title names no control to tap)
    snippets = _snippets(("/html/body/ol/li[1]/b", "b", "Your display settings"),
                         ("/html/body/ol/li[1]/p", "p", "Open Settings and tap Display."),
                         ("/html/body/ol/li[2]/b", "b", "The switch"),
                         ("/html/body/ol/li[2]/p", "p", "Turn on Dark theme."))
    block = next(b for b in find_blocks(snippets) if b.kind == "list")
    assert block.steps == ["Open Settings and tap Display.", "Turn on Dark theme."]
    assert block.context == ["Your display settings", "The switch"]


def test_an_action_title_stays_in_its_step():
    snippets = _snippets(("/html/body/ol/li[1]/b", "b", "Open Settings"),
                         ("/html/body/ol/li[1]/p", "p", "Tap the gear icon."),
                         ("/html/body/ol/li[2]/b", "b", "Turn on Dark theme"),
                         ("/html/body/ol/li[2]/p", "p", "Flip the switch."))
    block = next(b for b in find_blocks(snippets) if b.kind == "list")
    assert block.steps == ["Open Settings. Tap the gear icon.", "Turn on Dark theme. Flip the switch."]
    assert block.context == []


def test_a_paragraph_of_steps_is_split_into_sentences():
    snippets = _snippets(("/html/body/div/p[1]", "p", "From any Home screen, tap the Menu key. Tap System settings ."),
                         ("/html/body/div/p[2]", "p", "Tap Call . Tap Wi-Fi Calling ."))
    runs = [b for b in find_blocks(snippets) if b.kind == "imperative" and len(set(b.positions)) == 2]
    assert runs and runs[0].steps == ["From any Home screen, tap the Menu key.", "Tap System settings .",
                                      "Tap Call .", "Tap Wi-Fi Calling ."]


def test_options_announced_by_the_last_step_stay_with_it():
    snippets = _snippets(
        ("/html/body/div/p[1]", "p", "Tap Call . Tap Connection Preferences ."),
        ("/html/body/div/p[2]", "p", "Select one of the following options: Wi-Fi Preferred : All calls use Wi-Fi."),
        ("/html/body/div/p[3]", "p", "Cellular Network Preferred : All calls are made over the cellular network."))
    prose = [b for b in find_blocks(snippets) if b.kind == "prose"]
    assert prose and prose[0].steps[-1] == "Cellular Network Preferred : All calls are made over the cellular network."


def test_the_last_numbered_heading_takes_the_instruction_below_it():
    snippets = _snippets(("/html/body/div/h3[1]", "h3", "1. From the Home screen, tap the Apps icon ."),
                         ("/html/body/div/h3[2]", "h3", "2. Tap Settings > Connections ."),
                         ("/html/body/div/h3[3]", "h3", "3. Tap Mobile networks ."),
                         ("/html/body/div/p", "p", "Slide the VoLTE calls switch to the ON position."),
                         ("/html/body/p", "p", "Our phones are the best."))
    block = next(b for b in find_blocks(snippets) if b.kind == "numbered")
    assert block.steps[-1] == "Tap Mobile networks . Slide the VoLTE calls switch to the ON position."
