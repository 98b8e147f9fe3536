"""PNG screenshots: valid, the screen's size, and they show what the dump says."""

from __future__ import annotations

import io

import pytest
import support_sim
from PIL import Image
from support_sim import find, tap

from execution.sim.simulator import Simulator
from execution.sim.world import load_world, parse_world


def _image(sim: Simulator) -> Image.Image:
    png = sim.screenshot_png()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    img = Image.open(io.BytesIO(png))
    img.load()
    return img.convert("RGB")


@pytest.mark.parametrize("name", ["android13-settings", "android9-settings", "video-app", "maps-app"])
def test_screenshot_is_a_png_of_the_screen_size_with_content(name):
    world = load_world(name)
    sim = Simulator(world)
    assert _image(sim).size == (world.device.width, world.device.height)  # launcher
    sim.launch(world.app.package)
    img = _image(sim)
    assert img.size == (world.device.width, world.device.height)
    colours = img.getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 20  # text, icons, bars: not a blank frame


def test_switch_state_is_visible():
    sim = Simulator(parse_world(support_sim.mini_world()))
    sim.launch("com.example.settings")
    tap(sim, "Display")
    switch = next(n for n in _walk(find(sim, "Dark theme")) if n.cls == "android.widget.Switch")
    before = _image(sim).crop(switch.bounds)
    tap(sim, "Dark theme")
    after = _image(sim).crop(switch.bounds)
    assert before.tobytes() != after.tobytes()
    # the "on" switch uses the accent colour
    accent = (26, 115, 232)
    assert accent in _colours(after)
    assert accent not in _colours(before)


def test_dialog_dims_the_page_under_it():
    sim = Simulator(parse_world(support_sim.mini_world()))
    sim.launch("com.example.settings")
    tap(sim, "Display")
    page = _image(sim)
    tap(sim, "Screen timeout")
    dialog = _image(sim)
    frame = sim.window().frame
    # outside the dialog: darker; white background becomes grey
    corner = (10, frame[3] + 40)
    assert sum(dialog.getpixel(corner)) < sum(page.getpixel(corner)) * 0.7
    # inside the dialog: the card is light
    inside = ((frame[0] + frame[2]) // 2, frame[1] + 8)
    assert sum(dialog.getpixel(inside)) > 600


def _walk(node):
    from execution.sim.layout import walk

    return walk(node)


def _colours(img: Image.Image) -> set:
    return {colour for _, colour in img.getcolors(maxcolors=1 << 20)}


def test_repeated_screens_reuse_their_png_and_every_png_matches_a_fresh_drawing():
    from execution.sim.render import render_png

    sim = Simulator(parse_world(support_sim.mini_world()))
    sim.launch("com.example.settings")
    first = sim.screenshot_png()
    shots = []
    for action in (lambda: tap(sim, "Display"), lambda: tap(sim, "Dark theme"), lambda: sim.key("back"),
                   lambda: tap(sim, "Display"), lambda: tap(sim, "Dark theme")):
        action()
        png = sim.screenshot_png()
        assert png == render_png(sim)  # a kept PNG is never a stale one
        shots.append(png)
    assert shots[0] != shots[1] and shots[1] != shots[4]  # the switch changed, and back
    assert shots[4] is shots[0]  # the Display page with the switch off again: not drawn again
    sim.key("back")
    assert sim.screenshot_png() is first
    half = sim.screenshot_png(0.5)
    assert half is not first and half == render_png(sim, scale=0.5)
