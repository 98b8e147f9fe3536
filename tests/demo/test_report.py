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


# --- evidence for verified pages -----------------------------------------------------------------

def _greenish(pixel) -> bool:
    r, g, b = pixel[:3]
    return g > 100 and r < 90 and b < 90


def test_marks_land_on_the_device_point_when_screenshots_are_stored_at_half_size(tmp_path):
    from verirank.report.annotate import highlight

    src = _blank_screen(tmp_path / "half.png", size=(540, 1200))  # a 1080x2400 screen stored at 0.5
    action = Action(type=ActionType.CLICK, x=540, y=1200)
    annotate(src, tmp_path / "tap.png", action, screen_width=1080)
    tap = Image.open(tmp_path / "tap.png").convert("RGB")
    assert tap.size == (360, 800) and _reddish(tap.getpixel((180, 400)))
    highlight(src, tmp_path / "box.png", (90, 600, 990, 900), "Dark mode", screen_width=1080)
    box = Image.open(tmp_path / "box.png").convert("RGB")
    assert _greenish(box.getpixel((180, 600 // 3 - 1)))    # top edge of the box, at device y 600
    assert _greenish(box.getpixel((990 // 3 + 1, 250)))    # right edge
    assert not _greenish(box.getpixel((180, 250)))         # inside: untouched
    assert not _greenish(box.getpixel((180, 700)))


def _record(index, step, action, **kw):
    from verirank_core.execution_records import StepRecord

    return StepRecord(index=index, step_index=step, action=action, screenshot=f"step_{index:03d}.png",
                      ok=kw.pop("ok", True), **kw)


def test_evidence_cites_the_matched_screen_and_the_screen_after_it():
    from verirank_core.execution_records import StopReason, Trajectory
    from verirank.report.evidence import page_evidence

    tap = Action(type=ActionType.CLICK, x=540, y=700, target_label="Display", target_bounds=[0, 650, 1080, 750])
    miss = Action(type=ActionType.CLICK, x=540, y=900, target_label="Battery", target_bounds=[0, 850, 1080, 950])
    toggle = Action(type=ActionType.CLICK, x=900, y=500, target_label="Dark mode", target_bounds=[0, 450, 1080, 550])
    wait = Action(type=ActionType.WAIT, rationale="'Auto-rotate' is already on; not toggled")
    dark = {"label": "Dark mode", "role": "switch", "checked": True, "bounds": [0, 440, 1080, 540]}
    rotate = {"label": "Auto-rotate", "role": "switch", "checked": True, "bounds": [0, 600, 1080, 700]}
    traj = Trajectory(
        qid="q", url="u", device="sim:x", stop_reason=StopReason.COMPLETED,
        instructions=["Tap Display", "Turn on Dark mode", "Turn on Auto-rotate", "Tap Save"],
        steps=[
            _record(0, 0, miss, ok=False),                       # a failed try is no evidence
            _record(1, 0, tap, step_done=True),
            _record(2, 1, toggle, step_done=True, controls=[rotate]),
            _record(3, 2, wait, step_done=True, noop=True, controls=[dark, rotate]),
        ],
        final_screenshot="final.png", final_controls=[dark, rotate],
    )
    ev = page_evidence(traj)
    assert [e.step for e in ev] == [0, 1, 2, 3]
    display, dark_mode, auto, save = ev
    assert (display.record, display.label, display.bounds) == (1, "Display", (0, 650, 1080, 750))
    assert (display.matched_shot, display.effect_shot, display.effect_where) == ("step_001.png", "step_002.png", "screen #3")
    assert display.effect_bounds is None              # Display is not on the screen it opened
    assert (dark_mode.matched_shot, dark_mode.effect_shot) == ("step_002.png", "step_003.png")
    assert dark_mode.effect_bounds == (0, 440, 1080, 540)  # the switch, now on, boxed where it is after the tap
    assert auto.how == "already done" and auto.label == "Auto-rotate" and auto.bounds == (0, 600, 1080, 700)
    assert auto.matched_shot == auto.effect_shot == "step_003.png"
    assert auto.note == "'Auto-rotate' is already on; not toggled"  # the agent's reason is cited
    assert save.record is None and save.matched_shot is None
    # the last action's effect is on the final screen
    traj.steps = traj.steps[:3]
    assert page_evidence(traj)[1].effect_shot == "final.png"
    assert page_evidence(traj)[1].effect_where == "final screen"


def test_verified_pages_cite_evidence_screenshots_with_the_matched_control_boxed(demo_run):
    from verirank.report.evidence import evidence_file, page_evidence

    data = collect_run(demo_run.out)
    doc = lxml_html.parse(str(demo_run.out / "report.html")).getroot()
    verified = [p for q in data.queries for p in q.original if p.verified and p.trajectory is not None]
    assert verified, "the demo verified no page"
    checked = 0
    for page in verified:
        body = doc.get_element_by_id(page.anchor)
        items = body.xpath('.//ol[@class="evidence"]/li')
        assert len(items) == len(page.trajectory.instructions)
        assert page.trajectory.screen_size and page.trajectory.screenshot_scale == 0.5
        for ev, li in zip(page_evidence(page.trajectory), items):
            assert f"Step {ev.step + 1}" in li.text_content()
            if ev.record is None or ev.bounds is None:
                continue
            srcs = [img.get("src") for img in li.xpath('.//img')]
            # named after the evidence it shows (and the stored screen it was drawn from)
            assert Path(srcs[0]).name.startswith(Path(evidence_file(ev.step, "matched")).stem)
            # the box is drawn where the control is, in the copy's pixels
            image = Image.open(demo_run.out / srcs[0]).convert("RGB")
            scale = image.width / page.trajectory.screen_size[0]
            x1, y1, x2, y2 = (round(v * scale) for v in ev.bounds)
            edge = [image.getpixel((x, max(0, y1 - 2))) for x in range(x1 + 4, x2 - 4, 6)]
            assert sum(_greenish(p) for p in edge) >= 0.8 * len(edge), (page.url, ev)
            checked += 1
    assert checked, "no verified step had a matched control to box"
    # unverified pages cite nothing
    for q in data.queries:
        for page in q.original:
            if not page.verified:
                assert not doc.get_element_by_id(page.anchor).xpath('.//ol[@class="evidence"]')


def test_a_run_without_step_screenshots_still_gets_a_report(demo_run, tmp_path):
    # screenshots that were never saved (execution.screenshots=none) or cannot be read
    run = tmp_path / "noshots"
    shutil.copytree(demo_run.out, run, ignore=shutil.ignore_patterns("assets", "report.html", "mlflow.db", "mlruns"))
    pngs = sorted(run.glob("screens/*.png"))  # stage 2 keeps each distinct screen once
    assert len(pngs) > 2
    for i, png in enumerate(pngs):
        if i % 2:
            png.write_bytes(b"not a png")
        else:
            png.unlink()
    path = build_report(run, run / "report.html")
    doc = lxml_html.parse(str(path)).getroot()
    assert doc.xpath('//ol[@class="evidence"]')
    assert not doc.xpath('//img')
    assert "no screenshot" in path.read_text("utf-8")
