"""The HTML report: action drawing, contents, self-containment, and a real headless Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from lxml import html as lxml_html
from PIL import Image

from verirank_core.execution_records import Action, ActionType
from verirank_core.errors import StoreError
from verirank.report import build_report
from verirank.report.annotate import action_caption, annotate
from verirank.report.collect import collect_run

import support_chromium


# --- drawing actions ---------------------------------------------------------------------

def _blank_screen(path: Path, size=(1080, 2400)) -> Path:
    Image.new("RGB", size, "white").save(path)
    return path


def _reddish(pixel) -> bool:
    r, g, b = pixel[:3]
    return r > 180 and g < 120 and b < 120


def test_a_tap_is_drawn_at_its_point_on_a_smaller_copy(tmp_path):
    src = _blank_screen(tmp_path / "step_000.png")
    action = Action(type=ActionType.CLICK, x=540, y=1200, target_bounds=[0, 1100, 1080, 1300], target_label="Display")
    width, height = annotate(src, tmp_path / "out.png", action)
    assert (width, height) == (360, 800)
    image = Image.open(tmp_path / "out.png").convert("RGB")
    assert _reddish(image.getpixel((180, 400)))           # the dot at (540, 1200) / 3
    assert not _reddish(image.getpixel((90, 200)))        # far from the action: untouched
    assert _reddish(image.getpixel((180, 1100 // 3)))     # the target's bounds are outlined
    assert Image.open(src).getpixel((540, 1200)) == (255, 255, 255)  # the original is unchanged


def test_a_swipe_is_an_arrow_from_start_to_end(tmp_path):
    src = _blank_screen(tmp_path / "s.png")
    action = Action(type=ActionType.SWIPE, x=540, y=1800, x2=540, y2=600, text="down")
    annotate(src, tmp_path / "out.png", action)
    image = Image.open(tmp_path / "out.png").convert("RGB")
    # every point on the vertical segment between start and end is painted
    assert all(_reddish(image.getpixel((180, y))) for y in range(220, 600, 20))
    assert not _reddish(image.getpixel((60, 400)))


def test_failed_actions_are_orange_and_keys_get_a_label(tmp_path):
    src = _blank_screen(tmp_path / "s.png")
    annotate(src, tmp_path / "failed.png", Action(type=ActionType.CLICK, x=540, y=1200), ok=False)
    r, g, b = Image.open(tmp_path / "failed.png").convert("RGB").getpixel((180, 400))
    assert r > 200 and 100 < g < 180 and b < 60
    annotate(src, tmp_path / "back.png", Action(type=ActionType.BACK))
    bottom = Image.open(tmp_path / "back.png").convert("RGB").crop((0, 600, 360, 800))
    assert any(_reddish(bottom.getpixel((x, y))) for x in range(0, 360, 4) for y in range(0, 200, 4))


def test_captions_say_what_was_done():
    assert action_caption(Action(type=ActionType.CLICK, x=1, y=2, target_label="Wi-Fi")) == "tap 'Wi-Fi' at (1, 2)"
    assert action_caption(Action(type=ActionType.INPUT, text="hello")) == "type 'hello'"
    assert action_caption(Action(type=ActionType.BACK)) == "press back"


def test_an_unreadable_screenshot_names_the_file(tmp_path):
    bad = tmp_path / "step_001.png"
    bad.write_bytes(b"not a png")
    with pytest.raises(StoreError, match="step_001.png"):
        annotate(bad, tmp_path / "out.png", None)


# --- the report of the demo run ----------------------------------------------------------------

def test_the_report_covers_every_query_and_page(demo_run):
    data = collect_run(demo_run.out)
    doc = lxml_html.parse(str(demo_run.out / "report.html")).getroot()
    assert len(data.queries) == 4
    for q in data.queries:
        section = doc.get_element_by_id(f"q-{q.query.qid}")
        lists = section.xpath('.//ol[contains(@class, "results")]')
        assert len(lists) == 2  # original beside reranked
        original = [a.text_content() for a in lists[0].xpath('.//div[@class="what"]/a')]
        reranked = [a.text_content() for a in lists[1].xpath('.//div[@class="what"]/a')]
        assert original == [p.title for p in q.original]
        assert reranked == [p.title for p in q.reranked]
        assert sorted(original) == sorted(reranked)
        for page in q.original:
            body = doc.get_element_by_id(page.anchor)
            if page.extraction is not None and page.extraction.has_steps:
                xpaths = [c.text_content() for c in body.xpath('.//table[@class="steps"]//td[@class="xpath"]/code')]
                assert xpaths == [s.xpath or "" for s in page.extraction.steps]
            if page.trajectory is not None:
                figures = body.xpath('.//figure[contains(@class, "shot")]')
                assert len(figures) == len(page.trajectory.steps) + (1 if page.trajectory.final_screenshot else 0)


def test_verification_badges_follow_the_reranked_records(demo_run):
    ranked = [json.loads(line) for line in (demo_run.out / "reranked.jsonl").read_text().splitlines()]
    doc = lxml_html.parse(str(demo_run.out / "report.html")).getroot()
    badges = {}
    for li in doc.xpath('//ol[@class="results"]/li'):
        href = li.xpath('.//div[@class="what"]/a')[0].get("href")
        badges[href] = li.xpath('.//span[contains(@class, "badge")]')[0].text_content()
    data = collect_run(demo_run.out)
    anchors = {(p.qid, p.url): p.anchor for q in data.queries for p in q.original}
    assert any(item["verified"] for item in ranked), "the demo verified no page at all"
    for item in ranked:
        badge = badges["#" + anchors[(item["qid"], item["url"])]]
        if item["verified"]:
            assert badge.startswith("✔ verified on ")
            assert item["summary"].split(":")[0].strip() in badge
        else:
            assert "verified on" not in badge or badge.startswith("not verified")


def test_the_report_folder_is_self_contained(demo_run, tmp_path):
    # moving the folder elsewhere must not break anything
    moved = tmp_path / "moved"
    shutil.copytree(demo_run.out, moved, ignore=shutil.ignore_patterns("trajectories", "cache", "mlflow.db"))
    text = (moved / "report.html").read_text("utf-8")
    doc = lxml_html.fromstring(text)
    assert not doc.xpath('//script'), "the report is meant to work without JavaScript"
    sources = [img.get("src") for img in doc.xpath('//img')]
    assert sources, "no screenshots in the report"
    for src in sources:
        assert not src.startswith(("http:", "https:", "//", "/", "file:")), src
        assert (moved / src).is_file(), src
    for el in doc.xpath('//*[@href]'):
        assert el.get("href").startswith("#"), el.get("href")
    assert "url(" not in text.split("</style>")[0].split("<style>")[1]


def test_a_partial_run_still_gets_a_report(demo_run, tmp_path):
    run = tmp_path / "partial"
    run.mkdir()
    for name in ("queries.jsonl", "serp.jsonl", "extraction.jsonl"):
        shutil.copy(demo_run.out / name, run / name)
    path = build_report(run, run / "report.html")
    text = path.read_text("utf-8")
    assert "This run was not reranked yet." in text
    assert "Not executed." in text
    assert not (run / "assets").exists() or not any((run / "assets").rglob("*.png"))


def test_a_folder_without_results_is_refused(tmp_path):
    with pytest.raises(StoreError, match="serp.jsonl"):
        build_report(tmp_path, tmp_path / "report.html")


def test_report_command_writes_the_html(demo_run, tmp_path):
    out = tmp_path / "r" / "report.html"
    result = demo_run.invoke("report", demo_run.out, "--out", out)
    assert result.exit_code == 0, result.output
    assert out.is_file() and any((out.parent / "assets").rglob("*.png"))


# --- a real browser ---------------------------------------------------------------------------

chromium = pytest.mark.skipif(support_chromium.CHROMIUM is None,
                              reason="chromium is not installed (make test installs Debian's chromium)")


@chromium
def test_the_browser_check_catches_broken_pages(tmp_path):
    """The harness itself: a script error and a missing image must be reported."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><html><head><title>t</title></head><body>'
                    '<img src="missing.png"><script>undefinedFunction()</script></body></html>')
    check = support_chromium.check_page(page.as_uri())
    assert check.exceptions or check.console_errors
    assert [i["naturalWidth"] for i in check.images] == [0]


@chromium
def test_the_report_opens_in_chromium_without_errors(demo_run):
    check = support_chromium.check_page((demo_run.out / "report.html").as_uri())
    assert check.title == "verirank demo report"
    assert check.exceptions == []
    assert check.console_errors == []
    assert check.failed_loads == []
    doc = lxml_html.parse(str(demo_run.out / "report.html")).getroot()
    assert len(check.images) == len(doc.xpath('//img')) > 0
    broken = [i["src"] for i in check.images if not i["naturalWidth"]]
    assert broken == []
    # nothing is requested from the network
    assert all(url.startswith("file:") for url in check.requests), [u for u in check.requests if not u.startswith("file:")][:3]
