"""The simulator's dumps have the form of real `uiautomator dump` files (shared/fixtures/uiautomator)."""

from __future__ import annotations

import re

import pytest
import support_sim
from lxml import etree

from phonesim.simulator import Simulator
from phonesim.uixml import ATTRIBUTE_ORDER
from phonesim.world import load_world, parse_world

BOUNDS = re.compile(r"^\[(\d+),(\d+)\]\[(\d+),(\d+)\]$")


@pytest.fixture(scope="module")
def real_dumps(shared_dir):
    # the one-line files are the raw dumps; test_asset_* were pretty-printed by someone
    paths = sorted((shared_dir / "fixtures" / "uiautomator").glob("trace_*.xml"))
    assert paths
    return {p.name: p.read_text(encoding="utf-8") for p in paths}


def _sim_dumps() -> dict[str, str]:
    out = {}
    sim = Simulator(parse_world(support_sim.mini_world()))
    out["launcher"] = sim.dump_xml()
    sim.launch("com.example.settings")
    out["main"] = sim.dump_xml()
    support_sim.tap(sim, "Display")
    support_sim.tap(sim, "Screen timeout")
    out["dialog"] = sim.dump_xml()
    for name in ("android13-settings", "video-app"):
        s = Simulator(load_world(name))
        s.launch(s.world.app.package)
        out[name] = s.dump_xml()
    return out


def test_header_and_root_match_real_dumps(real_dumps):
    real = next(iter(real_dumps.values()))
    prefix = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\"><node "
    assert real.startswith(prefix)
    for name, xml in _sim_dumps().items():
        assert xml.startswith(prefix), name
        assert xml.endswith("</node></hierarchy>") or xml.endswith(" /></hierarchy>"), name
        assert "\n" not in xml, name  # one line, like the real tool
        root = etree.fromstring(xml.encode("utf-8"))
        assert root.tag == "hierarchy" and list(root.attrib) == ["rotation"]


def _order(node) -> tuple:
    """Attribute names, without the optional leading NAF flag."""
    names = tuple(node.attrib)
    return names[1:] if names[0] == "NAF" else names


def test_every_node_has_the_real_attribute_order(real_dumps):
    real_orders = set()
    for xml in real_dumps.values():
        for node in etree.fromstring(xml.encode("utf-8")).iter("node"):
            real_orders.add(_order(node))
    assert real_orders == {ATTRIBUTE_ORDER}
    for name, xml in _sim_dumps().items():
        nodes = list(etree.fromstring(xml.encode("utf-8")).iter("node"))
        assert len(nodes) > 10, name
        for node in nodes:
            assert _order(node) == ATTRIBUTE_ORDER, name
            assert BOUNDS.match(node.get("bounds")), node.get("bounds")
            for flag in ATTRIBUTE_ORDER[6:16]:
                assert node.get(flag) in ("true", "false")
        # index = position among siblings, as uiautomator numbers them
        for parent in etree.fromstring(xml.encode("utf-8")).iter():
            kids = [c for c in parent if c.tag == "node"]
            assert [int(c.get("index")) for c in kids] == list(range(len(kids)))


def test_leaves_and_escaping_are_written_like_the_real_tool(real_dumps):
    real = "".join(real_dumps.values())
    # leaves close with " />", newlines inside attributes become &#10;, & becomes &amp;
    assert '" />' in real and "&#10;" in real and "&amp;" in real
    main = _sim_dumps()["main"]
    assert '" />' in main and "/>" not in main.replace('" />', "")
    assert 'text="Plain words &amp; &lt;symbols&gt; &quot;quoted&quot;&#10;second line"' in main
    parsed = etree.fromstring(main.encode("utf-8"))
    texts = [n.get("text") for n in parsed.iter("node")]
    assert 'Plain words & <symbols> "quoted"\nsecond line' in texts


def test_app_window_has_the_system_frame_of_a_real_screen(real_dumps):
    real = etree.fromstring(real_dumps["trace_7_0.xml"].encode("utf-8"))
    real_top = real[0]
    assert [c.get("resource-id") for c in real_top][-2:] == ["android:id/statusBarBackground",
                                                             "android:id/navigationBarBackground"]
    sim = etree.fromstring(_sim_dumps()["main"].encode("utf-8"))
    top = sim[0]
    assert top.get("class") == real_top.get("class") == "android.widget.FrameLayout"
    assert top.get("bounds") == "[0,0][1080,2400]"
    assert [c.get("resource-id") for c in top][-2:] == ["android:id/statusBarBackground",
                                                        "android:id/navigationBarBackground"]
    assert top[0].get("class") == "android.widget.LinearLayout"
    # every node carries the app's package, like real dumps of one window
    assert {n.get("package") for n in sim.iter("node")} == {"com.example.settings"}


def test_dialog_dump_is_only_the_dialog_window():
    dialog = etree.fromstring(_sim_dumps()["dialog"].encode("utf-8"))
    top = dialog[0]
    x1, y1, x2, y2 = map(int, BOUNDS.match(top.get("bounds")).groups())
    assert 0 < x1 < x2 < 1080 and 0 < y1 < y2 < 2400
    ids = {n.get("resource-id") for n in dialog.iter("node")}
    assert {"android:id/alertTitle", "android:id/select_dialog_listview", "android:id/button1"} <= ids
    items = [n for n in dialog.iter("node") if n.get("class") == "android.widget.CheckedTextView"]
    assert [n.get("text") for n in items] == ["15 seconds", "30 seconds", "1 minute"]
    assert [n.get("checked") for n in items] == ["false", "true", "false"]


def test_naf_flag_follows_uiautomator_rule(real_dumps):
    """NAF="true" comes first, only on clickable enabled nodes with no words in their subtree."""

    def check(xml: str) -> int:
        flagged = 0
        for node in etree.fromstring(xml.encode("utf-8")).iter("node"):
            if "NAF" in node.attrib:
                flagged += 1
                assert tuple(node.attrib)[0] == "NAF" and node.get("NAF") == "true"
                assert node.get("clickable") == "true" and node.get("enabled") == "true"
                assert all(not n.get("text") and not n.get("content-desc") for n in node.iter("node"))
        return flagged

    assert sum(check(x) for x in real_dumps.values()) > 0
    # the split Wi-Fi row of the mini world has a clickable Switch with no text: NAF like on a phone
    assert check(_sim_dumps()["main"]) == 1
