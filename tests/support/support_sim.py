"""A small world for simulator tests: one of every widget, a long list, dialogs, a text field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

MINI_WORLD: dict[str, Any] = {
    "name": "mini",
    "app": {"package": "com.example.settings", "label": "MiniSettings", "version": "2.1",
            "launch_activity": ".Main", "default_activity": ".Sub"},
    "device": {"model": "Pixel 6", "os_version": "13", "sdk": 33},
    "state": {
        "dark": {"type": "bool"},
        "wifi": {"type": "bool", "initial": True},
        "timeout": {"type": "choice", "options": ["15 seconds", "30 seconds", "1 minute"], "initial": "30 seconds"},
        "name": {"type": "text"},
        "draft": {"type": "text"},
        "taps": {"type": "int", "min": 0, "max": 3},
        "size": {"type": "choice", "options": ["Small", "Default", "Large"], "initial": "Default"},
        "deleted": {"type": "bool"},
    },
    "screens": [
        {"id": "main", "title": "Settings", "back_arrow": False, "nodes": [
            {"kind": "row", "id": "display_row", "icon": True, "title": "Display", "summary": "Dark theme, timeout",
             "on_click": [{"goto": "display"}]},
            {"kind": "row", "title": "Wi-Fi", "summary": "{wifi?Connected:Off}", "switch": "wifi", "split": True,
             "on_click": [{"goto": "wifi"}]},
            {"kind": "row", "title": "Long list", "on_click": [{"goto": "long"}]},
            {"kind": "row", "title": "Name", "summary": "{name|Not set}", "on_click": [{"goto": "rename"}]},
            {"kind": "row", "title": "Secret", "visible_if": "taps >= 3", "on_click": [{"goto": "secret"}]},
            {"kind": "row", "title": "Build number", "on_click": [{"inc": "taps"}]},
            {"kind": "text", "text": "Plain words & <symbols> \"quoted\"\nsecond line"},
            {"kind": "row", "title": "Disabled row", "enabled_if": "false", "on_click": [{"set": {"dark": True}}]},
        ]},
        {"id": "display", "title": "Display", "nodes": [
            {"kind": "header", "title": "Appearance"},
            {"kind": "row", "id": "dark_row", "title": "Dark theme", "summary": "{dark?On:Off}", "switch": "dark"},
            {"kind": "row", "title": "Screen timeout", "summary": "After {timeout} of inactivity",
             "on_click": [{"dialog": "timeout_dialog"}]},
            {"kind": "slider", "title": "Font size", "var": "size"},
            {"kind": "row", "title": "Delete everything", "on_click": [{"dialog": "confirm"}]},
        ]},
        {"id": "timeout_dialog", "kind": "dialog", "title": "Screen timeout",
         "nodes": [{"kind": "choices", "var": "timeout"}], "buttons": [{"text": "Cancel"}]},
        {"id": "confirm", "kind": "dialog", "title": "Delete?", "message": "This cannot be undone.",
         "cancelable": False,
         "buttons": [{"text": "Cancel"}, {"text": "Delete", "on_click": [{"set": {"deleted": True}}, "dismiss"]}]},
        {"id": "wifi", "title": "Wi-Fi", "nodes": [
            {"kind": "row", "title": "Use Wi-Fi", "switch": "wifi"},
            {"kind": "row", "title": "HomeNet", "summary": "Connected", "visible_if": "wifi"},
        ]},
        {"id": "long", "title": "Long list", "nodes": [
            {"kind": "row", "title": f"Item {i}", "summary": f"Summary {i}"} for i in range(1, 31)
        ] + [{"kind": "row", "title": "Last item", "on_click": [{"set": {"dark": True}}]}]},
        {"id": "rename", "title": "Rename", "on_enter": [{"set": {"draft": ""}}], "nodes": [
            {"kind": "edit", "id": "name_field", "on_input": "draft", "hint": "Device name",
             "on_enter": [{"copy": {"name": "draft"}}, "back"]},
            {"kind": "button", "text": "Save", "enabled_if": "draft != ''", "on_click": [{"copy": {"name": "draft"}}, "back"]},
        ]},
        {"id": "secret", "title": "Secret", "nodes": [{"kind": "text", "text": "You found it"}]},
    ],
    "goals": {
        "dark_on": {"expr": "dark == true", "query": "How to turn on dark mode"},
        "timeout_1m": "timeout == '1 minute'",
        "secret": "taps >= 3",
        "named": "name == 'Work phone'",
        "deleted": "deleted",
    },
}


def mini_world() -> dict[str, Any]:
    """A fresh deep copy, safe to modify in a test."""
    return copy.deepcopy(MINI_WORLD)


def write_world(folder: Path, data: dict[str, Any], name: str = "mini.yaml") -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def find(sim, text: str):
    """The first clickable node (enabled or not) of the top window labelled ``text`` (itself or inside)."""
    from phonesim.layout import walk

    for node in (n for n in walk(sim.window().root) if n.clickable):
        if any(sub.text == text or sub.content_desc == text for sub in walk(node)):
            return node
    raise AssertionError(f"no clickable {text!r} on screen {sim.screen_id}: "
                         f"{[n.text for n in walk(sim.window().root) if n.text]}")


def tap(sim, text: str) -> None:
    """Tap the centre of the control labelled ``text``."""
    x1, y1, x2, y2 = find(sim, text).bounds
    sim.tap((x1 + x2) // 2, (y1 + y2) // 2)
