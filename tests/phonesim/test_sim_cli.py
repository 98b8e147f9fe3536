"""`verirank sim list | show | check | serve`."""

from __future__ import annotations

import io

import support_sim
from lxml import etree
from PIL import Image
from typer.testing import CliRunner

from verirank.cli import app

runner = CliRunner()


def test_list_shows_bundled_worlds():
    result = runner.invoke(app, ["sim", "list"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split()[:4] == ["world", "app", "package", "version"]
    a9 = next(line for line in lines if line.startswith("android9-settings"))
    assert "com.android.settings" in a9 and "Pixel 2" in a9 and " 9 " in a9
    assert any(line.startswith("video-app") and "TubeView" in line for line in lines)


def test_show_writes_png_and_xml_per_screen_and_scrolled_page(tmp_path):
    world = support_sim.write_world(tmp_path, support_sim.mini_world())
    out = tmp_path / "shots"
    result = runner.invoke(app, ["sim", "show", str(world), "--out", str(out), "--screens", "main,long,timeout_dialog"])
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in out.iterdir())
    assert {"main.png", "main.xml", "long.png", "long.xml", "long_p2.png", "long_p2.xml",
            "timeout_dialog.png", "timeout_dialog.xml"} <= set(names)
    img = Image.open(io.BytesIO((out / "long.png").read_bytes()))
    assert img.size == (1080, 2400)
    first = {n.get("text") for n in etree.parse(str(out / "long.xml")).iter("node")}
    last_page = sorted(p for p in names if p.startswith("long_p") and p.endswith(".xml"))[-1]
    last = {n.get("text") for n in etree.parse(str(out / last_page)).iter("node")}
    assert "Item 1" in first and "Last item" not in first
    assert "Last item" in last and "Item 1" not in last


def test_show_rejects_unknown_screens(tmp_path):
    result = runner.invoke(app, ["sim", "show", "android13-settings", "--out", str(tmp_path), "--screens", "nope"])
    assert result.exit_code == 2
    assert "unknown screen(s) nope" in result.output


def test_check_passes_a_good_world_and_flags_a_broken_one(tmp_path):
    good = support_sim.write_world(tmp_path, support_sim.mini_world())
    result = runner.invoke(app, ["sim", "check", str(good)])
    assert result.exit_code == 0, result.output
    assert "goal dark_on: 3 steps" in result.output and "OK" in result.output

    data = support_sim.mini_world()
    data["screens"].append({"id": "island", "title": "Nobody links here"})
    data["goals"]["impossible"] = "timeout == '15 seconds' and timeout == '1 minute'"
    bad = support_sim.write_world(tmp_path, data, "bad.yaml")
    result = runner.invoke(app, ["sim", "check", str(bad)])
    assert result.exit_code == 1
    assert "unreachable screen: island" in result.output
    assert "goal impossible: NOT satisfiable" in result.output


def test_invalid_world_is_one_clear_line(tmp_path):
    data = support_sim.mini_world()
    data["screens"][0]["nodes"][0]["on_click"] = [{"goto": "nowhere"}]
    path = support_sim.write_world(tmp_path, data)
    result = runner.invoke(app, ["sim", "show", str(path), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "unknown screen 'nowhere'" in result.output and "Traceback" not in result.output


def test_serve_is_registered():
    result = runner.invoke(app, ["sim", "serve", "--help"])
    assert result.exit_code == 0
    assert "--port" in result.output and "ADB protocol" in result.output
