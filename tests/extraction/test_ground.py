"""ground_steps: keep what the page says, in page order, with the XPath it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from rouge_score import rouge_scorer

from extraction.clean import clean_page
from verirank_core.extraction_config import GroundConfig
from extraction.ground import container_of, ground_steps, near_region, rouge_l, tokenize
from verirank_core.extraction_records import CleanedPage, Snippet

PAGES = Path(__file__).resolve().parent.parent / "fixtures" / "pages"
OL1 = "/html/body/main/article/ol[1]"


@pytest.fixture(scope="module")
def encoder():
    from verirank_core.embed import default_encoder

    return default_encoder()


@pytest.fixture(scope="module")
def help_page() -> CleanedPage:
    return clean_page((PAGES / "help_centre_dark_theme.html").read_bytes(), url="u", qid="q")


def test_own_rouge_l_equals_rouge_score_package():
    scorer = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)
    pairs = [("Open the Settings app", "Open your device's Settings app."),
             ("Tap Display", "Tap Display and then Dark theme."),
             ("Turn on Dark theme", "Turn Dark theme on or off."),
             ("Bake a cake", "Tap Display.")]
    for step, snippet in pairs:
        ref = scorer.score(snippet, step)["rougeL"]  # score(target, prediction)
        p, r, f = rouge_l(tokenize(step), tokenize(snippet))
        assert (p, r, f) == pytest.approx((ref.precision, ref.recall, ref.fmeasure))


def test_verbatim_steps_ground_to_their_list_items(help_page, encoder):
    steps = ["Open your device's Settings app.", "Tap Display.", "Turn Dark theme on or off."]
    result = ground_steps(steps, help_page, encoder)
    assert result.dropped == []
    assert [s.xpath for s in result.steps] == [f"{OL1}/li[1]", f"{OL1}/li[2]", f"{OL1}/li[3]"]
    assert all(s.match == "rouge" and s.rouge_l == 1.0 and s.distance == 0.0 for s in result.steps)
    assert [s.index for s in result.steps] == [0, 1, 2]


def test_a_hallucinated_step_is_dropped_and_the_rest_kept(help_page, encoder):
    steps = ["Open your device's Settings app.", "Tap Bluetooth and pair your headphones.",
             "Tap Display.", "Turn Dark theme on or off."]
    result = ground_steps(steps, help_page, encoder)
    assert result.dropped == ["Tap Bluetooth and pair your headphones."]
    assert [s.text for s in result.steps] == ["Open your device's Settings app.", "Tap Display.",
                                              "Turn Dark theme on or off."]


def test_lightly_paraphrased_steps_ground_to_the_right_xpath(help_page, encoder):
    steps = ["Open the Settings app", "Tap Display", "Turn on Dark theme"]
    result = ground_steps(steps, help_page, encoder)
    assert result.dropped == []
    assert [s.xpath for s in result.steps] == [f"{OL1}/li[1]", f"{OL1}/li[2]", f"{OL1}/li[3]"]
    assert result.steps[0].match == "containment"
    assert result.steps[0].rouge_l < 0.7          # F1 alone (the paper's rule) would lose it
    assert result.steps[0].containment == 1.0
    # the paper's rule (no containment) drops the paraphrases and keeps only the exact one
    strict = ground_steps(steps, help_page, encoder, GroundConfig(use_containment=False))
    assert [s.text for s in strict.steps] == ["Tap Display"]


def test_a_semantic_paraphrase_grounds_through_the_embedding_distance(encoder):
    page = CleanedPage(qid="q", url="u", html="", snippets=[
        Snippet(index=0, xpath="/html/body/p[1]", text="Welcome to our guide.", tag="p"),
        Snippet(index=1, xpath="/html/body/p[2]", text="Launch the Settings application on the phone.", tag="p"),
    ])
    step = "Launch the Settings app on your phone."
    tight = ground_steps([step], page, encoder, GroundConfig(use_containment=False, rouge_threshold=0.95,
                                                              distance_threshold=0.05))
    assert tight.steps == [] and tight.dropped == [step]
    loose = ground_steps([step], page, encoder, GroundConfig(use_containment=False, rouge_threshold=0.95,
                                                              distance_threshold=0.6))
    assert len(loose.steps) == 1
    grounded = loose.steps[0]
    assert grounded.match == "distance" and grounded.xpath == "/html/body/p[2]"
    assert 0.05 < grounded.distance < 0.6


def test_order_follows_the_page_not_the_extractor(help_page, encoder):
    # the later list also has "Open ... Settings app": the anchor that lets the next
    # steps ground near it wins, and later steps are only searched after it
    steps = ["Open your device's Settings app.", "Tap Schedule and choose Turns on from sunset to sunrise."]
    result = ground_steps(steps, help_page, encoder)
    assert [s.xpath for s in result.steps][0] == "/html/body/main/article/ol[2]/li[1]"
    # a step that sits before the previous one on the page is not searched backwards
    backwards = ground_steps(["Turn Dark theme on or off.", "Open your device's Settings app."], help_page, encoder)
    xpaths = [s.xpath for s in backwards.steps]
    assert xpaths[0] == f"{OL1}/li[3]"
    assert xpaths[1:] in ([], ["/html/body/main/article/ol[2]/li[1]"])
    positions = [next(s.index for s in help_page.snippets if s.xpath == x) for x in xpaths]
    assert positions == sorted(positions)


def test_a_missed_middle_step_is_recovered_from_the_same_list(help_page, encoder):
    steps = ["Open your device's Settings app.", "Turn Dark theme on or off."]
    result = ground_steps(steps, help_page, encoder)
    assert [(s.text, s.origin) for s in result.steps] == [
        ("Open your device's Settings app.", "extracted"),
        ("Tap Display.", "recovered"),
        ("Turn Dark theme on or off.", "extracted"),
    ]
    assert result.steps[1].xpath == f"{OL1}/li[2]" and result.steps[1].match == "recovered"
    off = ground_steps(steps, help_page, encoder, GroundConfig(recover_missed=False))
    assert [s.text for s in off.steps] == steps
    capped = ground_steps(steps, help_page, encoder, GroundConfig(max_recovered_gap=0))
    assert [s.text for s in capped.steps] == steps


def test_a_short_item_is_not_the_heading_of_the_longer_step_after_it(encoder):
    # real-text (a Samsung help page): "Tap Ringtone" names words of the next step, but that
    # step does not start with them, so it is not "Tap Ringtone" read together with its body;
    # grounding it there left the next item unmatched and brought it back as a second copy
    items = ["From any Home screen, tap Contacts .", "Tap the desired contact.", "Tap the Edit icon (pencil).",
             "Tap Ringtone .", "Tap the desired ringtone to assign it to the contact and then tap OK .", "Tap Save ."]
    html = "<html><body><h1>Set a contact's ringtone</h1><ol>" + "".join(f"<li>{t}</li>" for t in items)
    page = clean_page((html + "</ol></body></html>").encode(), url="u", qid="q")
    result = ground_steps(items, page, encoder)
    assert [s.text for s in result.steps] == items
    assert [s.xpath for s in result.steps] == [f"/html/body/ol/li[{n}]" for n in range(1, 7)]
    assert all(s.origin == "extracted" for s in result.steps)


def test_breadcrumb_parts_ground_to_one_sentence(encoder):
    page = clean_page((PAGES / "breadcrumb_only_dark_theme.html").read_bytes(), url="u", qid="q")
    result = ground_steps(["Go to Settings", "Tap Display", "Tap Dark theme"], page, encoder)
    assert result.dropped == []
    assert {s.xpath for s in result.steps} == {"/html/body/div/p[1]"}
    # a short step alone (no successor confirming it) does not ground anywhere on the page
    alone = ground_steps(["Tap Display"], page, encoder)
    assert alone.steps == []


def test_thresholds_are_configurable(help_page, encoder):
    steps = ["Open your device's Settings app", "Tap Display and Dark theme"]
    default = ground_steps(steps, help_page, encoder)
    assert len(default.steps) == 2
    impossible = GroundConfig(rouge_threshold=1.0, distance_threshold=0.0, containment_threshold=1.0,
                              use_containment=False)
    assert ground_steps(steps, help_page, encoder, impossible).steps == []


def test_grounding_disabled_passes_steps_through(help_page, encoder):
    result = ground_steps(["Bake a cake", "  Tap   Display "], help_page, encoder, GroundConfig(enabled=False))
    assert [(s.text, s.origin, s.xpath) for s in result.steps] == [("Bake a cake", "ungrounded", None),
                                                                    ("Tap Display", "ungrounded", None)]
    assert result.dropped == []


def test_empty_inputs(help_page, encoder):
    assert ground_steps([], help_page, encoder).steps == []
    empty = CleanedPage(qid="q", url="u", html="", snippets=[])
    assert ground_steps(["Tap Display"], empty, encoder).dropped == ["Tap Display"]


def test_always_embed_records_distances(help_page, encoder):
    steps = ["Open the Settings app", "Tap Display."]
    lazy = ground_steps(steps, help_page, encoder)
    assert lazy.steps[0].distance is None and lazy.steps[1].distance == 0.0
    eager = ground_steps(steps, help_page, encoder, GroundConfig(always_embed=True))
    assert 0.0 < eager.steps[0].distance < 2.0


def test_near_is_the_container_or_the_window():
    snippets = [Snippet(index=i, xpath=x, text=f"t{i}", tag=x.rsplit("/", 1)[1].split("[")[0]) for i, x in enumerate([
        "/html/body/div/h2",
        "/html/body/div/ol/li[1]",
        "/html/body/div/ol/li[2]",
        "/html/body/div/ol/li[2]/ul/li",
        "/html/body/div/ol/li[3]",
        "/html/body/p[1]",
        "/html/body/p[2]",
    ])]
    assert container_of("/html/body/div/ol/li[2]") == "/html/body/div/ol"
    assert container_of("/html/body/div/ol/li[2]/ul/li") == "/html/body/div/ol/li[2]/ul"
    assert container_of("/html/body/p[1]") is None
    # window 0: only the container (the ol here) from the previous step on
    assert near_region(snippets, 1, 0) == [1, 2, 3, 4]
    assert near_region(snippets, 3, 0) == [3]
    assert near_region(snippets, 3, 1) == [3, 4]
    assert near_region(snippets, 5, 1) == [5, 6]
