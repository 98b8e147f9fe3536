"""UI context parsing on real uiautomator dumps (../shared/fixtures/uiautomator)."""

from __future__ import annotations

import re

import pytest

from execution.uicontext import UIContext
from execution.uitree import parse_bounds, parse_hierarchy
from verirank_core.errors import DeviceError


def _dump(shared_dir, name: str) -> str:
    return (shared_dir / "fixtures" / "uiautomator" / name).read_text("utf-8")


def _all_dumps(shared_dir):
    return sorted((shared_dir / "fixtures" / "uiautomator").glob("*.xml"))


def test_every_node_of_every_real_dump_is_parsed(shared_dir):
    files = _all_dumps(shared_dir)
    assert len(files) >= 19
    for path in files:
        xml = path.read_text("utf-8")
        roots = parse_hierarchy(xml)
        nodes = [n for r in roots for n in r.iter()]
        assert len(nodes) == len(re.findall(r"<node\b", xml)), path.name
        paths = [n.path for n in nodes]
        assert len(set(paths)) == len(paths), f"{path.name}: paths are not unique"
        assert all(p.startswith("/hierarchy/node[1]") for p in paths)
        # document order is preserved and parent links are consistent
        assert [n.order for n in nodes] == list(range(len(nodes)))
        assert all(c.parent is n for n in nodes for c in n.children)


def test_attributes_and_flags_of_a_known_node(shared_dir):
    roots = parse_hierarchy(_dump(shared_dir, "trace_7_9.xml"))
    box = next(n for r in roots for n in r.iter() if n.short_class == "CheckBox")
    assert box.text == "I understand and want to delete."
    assert box.bounds == (70, 999, 1010, 1125)
    assert box.checkable and box.checked and box.clickable and box.enabled and box.focusable
    assert not box.scrollable and not box.password
    assert box.path == "/hierarchy/node[1]/node[1]/node[1]/node[1]/node[1]/node[3]"
    # the same dialog one screen earlier: unchecked, and Delete disabled
    roots8 = parse_hierarchy(_dump(shared_dir, "trace_7_8.xml"))
    delete = next(n for r in roots8 for n in r.iter() if n.text == "Delete")
    assert delete.clickable and not delete.enabled


def test_no_break_spaces_are_normalised(shared_dir):
    roots = parse_hierarchy(_dump(shared_dir, "trace_18_2.xml"))
    texts = {n.text for r in roots for n in r.iter()}
    assert "Section 1: Rookie" in texts
    assert not any("\xa0" in t for t in texts)


@pytest.mark.parametrize("bad", [
    "",
    "not xml at all",
    "<hierarchy><node text='x'></hierarchy>",
    "<?xml version='1.0'?><html><body/></html>",
])
def test_malformed_dumps_raise_device_error(bad):
    with pytest.raises(DeviceError):
        parse_hierarchy(bad)


def test_status_line_before_the_xml_is_tolerated(shared_dir):
    xml = "UI hierchary dumped to: /dev/tty\n" + _dump(shared_dir, "trace_7_8.xml")
    assert len(parse_hierarchy(xml)) == 1


def test_bounds_parsing():
    assert parse_bounds("[0,63][1080,1792]") == (0, 63, 1080, 1792)
    assert parse_bounds("[-10,5][20,-1]") == (-10, 5, 20, -1)
    assert parse_bounds(None) == (0, 0, 0, 0)
    assert parse_bounds("garbage") == (0, 0, 0, 0)


def test_context_title_package_and_json(shared_dir):
    ui = UIContext.from_xml(_dump(shared_dir, "trace_7_7.xml"), (1080, 1792))
    assert ui.title == "Personal content"
    assert ui.package == "com.google.android.apps.maps"
    data = ui.to_json()
    assert data["screen"] == [1080, 1792]
    assert data["title"] == "Personal content"
    assert [c["id"] for c in data["controls"]] == list(range(len(ui.controls)))
    assert "back" in data["global_actions"]
    assert UIContext.from_xml(_dump(shared_dir, "test_asset_1.xml")).title == "Set up email"


def test_signature_tracks_visible_state(shared_dir):
    a = UIContext.from_xml(_dump(shared_dir, "trace_7_8.xml"))
    a2 = UIContext.from_xml(_dump(shared_dir, "trace_7_8.xml"))
    b = UIContext.from_xml(_dump(shared_dir, "trace_7_9.xml"))  # same dialog, box checked
    assert a.signature == a2.signature
    assert a.signature != b.signature
    summary = b.summary()
    assert summary["signature"] == b.signature
    assert "Delete all Timeline data from this device?" in summary["texts"]


def test_a_screen_seen_again_is_parsed_once_but_each_context_is_its_own(shared_dir):
    from execution import uicontext

    xml = _dump(shared_dir, "trace_7_8.xml")
    uicontext.clear_parse_cache()
    a = UIContext.from_xml(xml, None, "com.example.a", "A")
    b = UIContext.from_xml(xml, None, "com.example.b", "B")
    assert a.nodes is b.nodes and a.controls is b.controls  # one parse
    assert a is not b
    a.package, a.activity = "changed", "changed"  # the agent sets these from the device
    assert (b.package, b.activity) == ("com.example.b", "B")
    assert UIContext.from_xml(xml).package == "com.google.android.apps.maps"  # default from the tree
    # another screen size is another entry; the cache stays bounded
    c = UIContext.from_xml(xml, (540, 960))
    assert c.nodes is not a.nodes and (c.width, c.height) == (540, 960)
    for i in range(uicontext._PARSED_MAX + 10):
        UIContext.from_xml(xml + " " * i)
    assert len(uicontext._PARSED) == uicontext._PARSED_MAX
