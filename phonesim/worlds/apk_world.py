"""Turn a :class:`UIMap` parsed from a Settings APK into a simulator world document.

Each preference screen becomes a page whose nodes follow the XML: category
headers, rows that open other screens, switches and checkboxes bound to bool
state variables, list preferences that open a single-choice dialog, radio
groups, edit-text dialogs and sliders. Links that could not be resolved open
an empty placeholder page titled like the row (the coverage report lists why).

Collapsed "Advanced" sections (``settings:initialExpandedChildrenCount``) work
like AndroidX's ExpandButton: a row titled "Advanced" whose summary lists the
hidden titles, shown until tapped; the section collapses again each time the
screen is opened. Long screens scroll because the simulator lays pages out as
scrollable lists.

Screens the app builds in code arrive already filled (``aosp_screens.py``): their pages
keep their ``source``, action buttons sit side by side and open a confirm dialog when they
change data, a switch row that also opens a page is two-target (``split``), and a built row
shows the value of the page it opens (the chosen app or sound, On/Off). The device gets the
installed apps (home screen and app drawer) and quick settings tiles bound to the same
variables as the app's switches.

The result is a plain dict in the format of ``phonesim/world.py``;
:func:`build_apk_world` also validates it with the world loader.
"""

from __future__ import annotations

import re
from typing import Optional, Required, TypedDict, Unpack

from phonesim.expr import Value
from phonesim.world import World, parse_world
from phonesim.worlds.aosp_screens import INSTALLED_APPS
from phonesim.worlds.uimap import MapElement, MapScreen, UIMap
from verirank_core.json_types import JSONObject, JSONValue

__all__ = ["ONEPLUS_8", "APK_GOALS", "ui_map_to_world", "build_apk_world", "clean_text"]

#: the phone this APK ran on: OnePlus 8 (IN2013), OxygenOS 11 / Android 11
ONEPLUS_8: JSONObject = {
    "manufacturer": "OnePlus", "model": "IN2013", "os_version": "11", "sdk": 30,
    "width": 1080, "height": 2400, "density": 420, "navigation": "gesture",
    "launcher_package": "net.oneplus.launcher",
}

#: (goal, element key, value, How-to question)
ApkGoal = tuple[str, str, Value, str]

#: goals (LABELS ONLY) for settings the import can find
APK_GOALS: list[ApkGoal] = [
    ("dark_mode_on", "dark_mode_enabled", True, "How to turn on dark mode on a OnePlus phone"),
    ("auto_rotate_on", "toggle_lock_screen_rotation_preference", True, "How to turn on auto-rotate screen"),
    ("adaptive_brightness_off", "auto_brightness", False, "How to turn off adaptive brightness"),
]

#: quick settings tiles (AOSP frameworks/base/packages/SystemUI src/.../qs/tiles: WifiTile, BluetoothTile,
#: AirplaneModeTile, FlashlightTile, UiModeNightTile, RotationLockTile): (label, the setting key its switch
#: has in the app, or None for a tile with no Settings switch)
QS_TILES: list[tuple[str, Optional[str]]] = [
    ("Wi-Fi", "main_toggle_wifi"), ("Bluetooth", "bluetooth_settings"), ("Airplane mode", "airplane_mode"),
    ("Flashlight", None), ("Dark mode", "dark_mode_enabled"), ("Auto-rotate", "toggle_lock_screen_rotation_preference"),
]

#: apps with an icon on the home screen besides Settings (the rest are in the app drawer only)
HOME_ICONS = ("Phone", "Messages", "Chrome", "Camera", "Gallery", "Gmail")

_RESERVED = {"and", "or", "not", "true", "false", "contains"}


def clean_text(text: str) -> str:
    """Display text safe for world templates (braces would be read as placeholders)."""
    return text.replace("{", "(").replace("}", ")").strip()


class _Vars:
    """State variable names: one per setting key, shared by screens that show the same key."""

    def __init__(self) -> None:
        self.specs: dict[str, JSONObject] = {}
        self.by_key: dict[tuple[str, str], str] = {}

    def get(self, key: str, spec: JSONObject) -> str:
        # the same setting shown on two screens is one variable, whatever its description says
        signature = (key, repr(sorted((k, v) for k, v in spec.items() if k != "description")))
        if signature in self.by_key:
            return self.by_key[signature]
        base = re.sub(r"\W", "_", key).strip("_") or "setting"
        if base[0].isdigit() or base in _RESERVED:
            base = "v_" + base
        name, n = base, 2
        while name in self.specs:
            name, n = f"{base}_{n}", n + 1
        self.specs[name] = spec
        self.by_key[signature] = name
        return name


def ui_map_to_world(uimap: UIMap, *, name: str, description: str = "", label: str = "Settings",
                    version: str = "11", device: Optional[JSONObject] = None,
                    goals: Optional[list[ApkGoal]] = None) -> JSONObject:
    """A world document (dict) for ``uimap``; see the module docstring for the mapping."""
    builder = _WorldBuilder(uimap)
    builder.choice_settings()
    pages = [s for s in uimap.screens.values() if s.kind == "page"]
    for screen in pages:
        builder.page(screen)
    builder.fill_summaries()
    device = dict(device or ONEPLUS_8)
    device.setdefault("launcher_apps", [{"label": a.label, "package": a.package, "home": a.label in HOME_ICONS}
                                        for a in INSTALLED_APPS
                                        if a.package not in (uimap.app, device.get("launcher_package"))])
    device.setdefault("quick_settings", builder.quick_settings())
    doc: JSONObject = {
        "name": name,
        "description": description,
        "app": {"package": uimap.app, "label": label, "version": version, "launch_activity": ".Settings",
                "default_activity": ".SubSettings", "launch_screen": uimap.home},
        "device": device,
        "style": {"accent": "#eb0029", "switch_id": "android:id/switch_widget"},
        "state": builder.vars.specs,
        "screens": builder.screens,
        "goals": builder.goals(goals if goals is not None else APK_GOALS),
    }
    return doc


class WorldOptions(TypedDict, total=False):
    """The keyword arguments of :func:`ui_map_to_world`."""

    name: Required[str]
    description: str
    label: str
    version: str
    device: Optional[JSONObject]
    goals: Optional[list[ApkGoal]]


def build_apk_world(uimap: UIMap, **options: Unpack[WorldOptions]) -> tuple[JSONObject, World]:
    """The world document and the validated :class:`World` (raises ``WorldError`` if invalid)."""
    doc = ui_map_to_world(uimap, **options)
    return doc, parse_world(doc, source=f"<import of {options.get('name', uimap.app)}>")


class _WorldBuilder:
    def __init__(self, uimap: UIMap):
        self.map = uimap
        self.vars = _Vars()
        self.screens: list[JSONObject] = []
        #: element key -> state variable (for goals)
        self.var_of_key: dict[str, str] = {}
        #: built links whose row summary shows the state of the page they open: target -> [(node, element)]
        self.summary_rows: dict[str, list[tuple[JSONObject, MapElement]]] = {}
        #: the first switch or the single radio group of each page: screen id -> (kind, variable)
        self.page_value: dict[str, tuple[str, str]] = {}

    # -- screens

    def choice_settings(self) -> None:
        """Settings that built screens share (the screen lock type): one choice variable each."""
        for key, spec in self.map.choice_settings.items():
            self.var_of_key[key] = self.vars.get(key, {"type": "choice", **spec})

    def page(self, screen: MapScreen) -> None:
        home = screen.id == self.map.home
        out: JSONObject = {"id": screen.id, "title": clean_text(screen.title)}
        if screen.built_from:
            out["source"] = screen.source
        if home:
            out["back_arrow"] = False
        nodes: list[JSONObject] = []
        # one "Advanced" row and one bool variable per collapsible section
        sections = list(dict.fromkeys(el.section for el in screen.elements if el.collapsed))
        expand_vars = {sec: self.vars.get(f"{screen.id}__{sec}__expanded", {"type": "bool", "initial": False})
                       for sec in sections}
        if expand_vars:
            out["on_enter"] = [{"set": {var: False}} for var in expand_vars.values()]
        radio_vars = self.radio_groups(screen)
        for el in screen.elements:
            node = self.node(screen, el, radio_vars, icon=home)
            if node is None:
                continue
            if el.collapsed:
                var = expand_vars[el.section]
                if not any(n.get("visible_if") == var for n in nodes):
                    members = [e for e in screen.elements if e.collapsed and e.section == el.section]
                    nodes.append({"id": f"{screen.id}.{el.section}.advanced", "kind": "row", "title": "Advanced",
                                  "summary": clean_text(_collapsed_summary(members)),
                                  "visible_if": f"not {var}", "on_click": [{"set": {var: True}}]})
                node["visible_if"] = var
            nodes.append(node)
        out["nodes"] = _button_bars(nodes)
        self.screens.append(out)
        groups = set(radio_vars.values())
        first_switch = next((n["switch"] for n in nodes if "switch" in n), None)
        if len(groups) == 1 and not first_switch:
            self.page_value[screen.id] = ("choice", groups.pop())
        elif first_switch and not groups:
            self.page_value[screen.id] = ("switch", first_switch)

    def radio_groups(self, screen: MapScreen) -> dict[str, str]:
        """Radio preferences under the same header form one choice: element key -> variable."""
        groups: dict[str, list[MapElement]] = {}
        for el in screen.elements:
            if el.kind == "radio":
                groups.setdefault(el.category, []).append(el)
        out = {}
        for category, members in groups.items():
            options = list(dict.fromkeys(clean_text(m.title) for m in members))
            initial = next((clean_text(m.title) for m in members if m.default is True), options[0])
            spec: JSONObject = {"type": "choice", "options": options, "initial": initial}
            sources = list(dict.fromkeys(m.built_from for m in members if m.built_from))
            if sources:
                spec["description"] = "options built from " + "; ".join(sources)
            var = self.vars.get(f"{screen.id}__{category or 'choice'}", spec)
            for m in members:
                out[m.key] = var
        return out

    def placeholder(self, screen: MapScreen, el: MapElement) -> str:
        """An empty page for a link the import could not resolve (reason in the coverage report)."""
        pid = f"{screen.id}__{el.key}__unresolved"
        self.screens.append({"id": pid, "title": clean_text(el.title)})
        return pid

    def dialog(self, screen: MapScreen, el: MapElement, nodes: list[JSONObject],
               buttons: list[JSONObject]) -> str:
        did = f"{screen.id}__{el.key}__dialog"
        self.screens.append({"id": did, "kind": "dialog", "title": clean_text(el.title), "nodes": nodes,
                             "buttons": buttons})
        return did

    # -- nodes

    def node(self, screen: MapScreen, el: MapElement, radio_vars: dict[str, str], icon: bool) -> Optional[dict]:
        title = clean_text(el.title)
        summary = clean_text(el.summary)
        node: JSONObject = {"id": f"{screen.id}.{el.key}"}
        if el.kind == "header":
            return {**node, "kind": "header", "title": title}
        if el.kind == "text":
            return {**node, "kind": "text", "text": "\n".join(t for t in (title, summary) if t)}
        if el.kind == "input":
            # an entry field on the page (a PIN or password), typed into directly
            var = self.vars.get(el.key, {"type": "text", "initial": "", "description": f"typed: {el.built_from}"})
            return {**node, "kind": "edit", "on_input": var, "hint": title}
        node.update({"kind": "row", "title": title})
        if summary:
            node["summary"] = summary
        if icon:
            node["icon"] = True
        if el.kind == "button":
            return self.button(screen, el, node)
        if el.kind in ("switch", "checkbox"):
            spec = {"type": "bool", "initial": bool(el.default) if el.default is not None else False}
            if el.built_from:
                spec["description"] = f"built from {el.built_from}"
            var = self.vars.get(el.key, spec)
            self.var_of_key.setdefault(el.key, var)
            if el.summary_on or el.summary_off:
                node["summary"] = "{%s?%s:%s}" % (var, _no_colon(el.summary_on or summary),
                                                  _no_colon(el.summary_off or summary))
            if el.kind == "switch":
                node["switch"] = var
            else:
                node.update({"kind": "checkbox", "var": var})
        elif el.kind == "list":
            node["on_click"] = [{"dialog": self.list_dialog(screen, el, node)}]
        elif el.kind == "radio":
            node.update({"kind": "radio", "var": radio_vars[el.key], "value": title})
        elif el.kind == "edit":
            var = self.vars.get(el.key, {"type": "text", "initial": ""})
            edit = {"kind": "edit", "on_input": var, "hint": title}
            node["on_click"] = [{"dialog": self.dialog(screen, el, [edit], _buttons("Cancel", "OK"))}]
        elif el.kind == "slider":
            var = self.vars.get(el.key, {"type": "int", "min": 0, "max": 100, "initial": 50})
            node = {"id": node["id"], "kind": "slider", "title": title, "var": var}
        if el.target and el.kind not in ("list", "edit", "radio", "slider", "checkbox"):
            node["on_click"] = [{"goto": el.target}]
            if el.kind == "switch":
                # a MasterSwitchPreference (or a built app row): the text opens the page, the switch toggles
                node["split"] = True
            target = self.map.screens.get(el.target)
            if el.built_from or (target is not None and target.built_from):
                self.summary_rows.setdefault(el.target, []).append((node, el))
        elif el.unresolved and el.kind in ("link", "pref"):
            node["on_click"] = [{"goto": self.placeholder(screen, el)}]
        # an unresolved switch row (a MasterSwitchPreference whose page is another app's, e.g.
        # network_and_internet.xml's oneplus_wifi_calling_plus -> com.oneplus.sprint.callingplus) keeps
        # the one part of it the resources describe, its switch: a tap toggles it, never an empty page
        elif el.sets or el.closes:
            node["on_click"] = self.set_and_close(el)
        elif el.confirm:
            node["on_click"] = [{"dialog": self.confirm_dialog(screen, el)}]  # a row that asks first
        if el.shows in self.var_of_key:
            node["summary"] = "{%s}" % self.var_of_key[el.shows]
        if not el.selectable and "on_click" not in node and "switch" not in node:
            node["clickable"] = False
        if not el.enabled:
            node["enabled"] = False
        elif el.dependency and el.dependency in self.var_of_key:
            node["enabled_if"] = self.var_of_key[el.dependency]
        elif el.enabled_when and el.enabled_when[0] in self.var_of_key:
            key, values = el.enabled_when
            node["enabled_if"] = " or ".join(f"{self.var_of_key[key]} == '{v}'" for v in values)
        return node

    def button(self, screen: MapScreen, el: MapElement, node: JSONObject) -> JSONObject:
        """An action button; one that changes data asks to confirm first (the confirm is what counts)."""
        out = {"id": node["id"], "kind": "button", "text": clean_text(el.title)}
        if el.target:
            out["on_click"] = [{"goto": el.target}]
            return out
        if el.sets or el.closes:
            out["on_click"] = self.set_and_close(el)
            return out
        if el.confirm:
            out["on_click"] = [{"dialog": self.confirm_dialog(screen, el)}]
        else:
            out["on_click"] = [{"set": {self.done_var(el): True}}]
        return out

    def done_var(self, el: MapElement) -> str:
        return self.vars.get(f"{el.key}__done", {"type": "bool", "initial": False,
                                                 "description": f"pressed/confirmed: {el.title} ({el.built_from})"})

    def confirm_dialog(self, screen: MapScreen, el: MapElement) -> str:
        """The dialog a data-changing action asks first; its confirm button sets ``<key>__done``."""
        confirm = el.confirm or {}
        did = f"{screen.id}__{el.key}__confirm"
        if el.kind == "switch":
            return self.switch_confirm(did, el, confirm)
        self.screens.append({
            "id": did, "kind": "dialog", "title": clean_text(confirm.get("title", "")),
            "message": clean_text(confirm.get("message", "")), "nodes": [],
            "buttons": [{"kind": "button", "text": "Cancel"},
                        {"kind": "button", "text": clean_text(confirm["button"]),
                         "on_click": [{"set": {self.done_var(el): True}}, "dismiss"]}]})
        return did

    def switch_confirm(self, did: str, el: MapElement, confirm: dict[str, str]) -> str:
        """A switch that asks before each change (an accessibility service): the dialog's words follow its state."""
        var = self.var_of_key[el.key]

        def either(field: str) -> str:
            on, off = clean_text(confirm.get(f"off_{field}", "")), clean_text(confirm.get(field, ""))
            return "{%s?%s:%s}" % (var, on.replace(":", ""), off.replace(":", ""))

        self.screens.append({
            "id": did, "kind": "dialog", "title": either("title"), "message": either("message"), "nodes": [],
            "buttons": [{"kind": "button", "text": "{%s?Cancel:%s}" % (var, clean_text(confirm.get("cancel", "Cancel")))},
                        {"kind": "button", "text": either("button"), "on_click": [{"toggle": var}, "dismiss"]}]})
        return did

    def set_and_close(self, el: MapElement) -> list[JSONValue]:
        """A tap that stores a value of a shared setting, then closes ``el.closes`` screens."""
        effects: list[JSONValue] = []
        if el.sets:
            key, value = el.sets
            effects.append({"set": {self.var_of_key[key]: value}})
        return effects + ["back"] * el.closes

    def fill_summaries(self) -> None:
        """A built row shows the value of the page it opens (the chosen app or sound, On/Off)."""
        for target, rows in self.summary_rows.items():
            value = self.page_value.get(target)
            if value is None:
                continue
            kind, var = value
            for node, el in rows:
                if node.get("summary"):
                    continue
                if kind == "choice":
                    node["summary"] = "{%s}" % var
                elif el.summary_on or el.summary_off:
                    node["summary"] = "{%s?%s:%s}" % (var, _no_colon(el.summary_on), _no_colon(el.summary_off))

    def list_dialog(self, screen: MapScreen, el: MapElement, row: JSONObject) -> str:
        """A single-choice dialog with the entries (or only Cancel when they are unknown)."""
        entries = list(dict.fromkeys(clean_text(e) for e in el.entries if clean_text(e)))
        if not entries:
            if row.get("summary", "").strip() == "%s":
                del row["summary"]
            return self.dialog(screen, el, [], _buttons("Cancel"))
        initial = el.default if el.default in entries else entries[0]
        spec: JSONObject = {"type": "choice", "options": entries, "initial": initial}
        if el.entries_source:
            spec["description"] = f"options from {el.entries_source}"
        var = self.vars.get(el.key, spec)
        self.var_of_key.setdefault(el.key, var)
        if "%s" in row.get("summary", ""):
            row["summary"] = row["summary"].replace("%s", "{%s}" % var)
        return self.dialog(screen, el, [{"kind": "choices", "var": var}], _buttons("Cancel"))

    # -- quick settings

    def quick_settings(self) -> list[JSONObject]:
        """The tiles, each bound to the same variable as the app's switch for its setting."""
        tiles = []
        for label, key in QS_TILES:
            if key is None:
                var = self.vars.get(f"qs_{label}", {"type": "bool", "initial": False,
                                                     "description": f"quick settings tile {label} (no Settings switch)"})
                tiles.append({"label": label, "var": var})
                continue
            var = self.var_of_key.get(key)
            if var is None or self.vars.specs[var]["type"] != "bool":
                continue
            tile: JSONObject = {"label": label, "var": var}
            where = next(((s.id, el) for s in self.map.screens.values() for el in s.elements
                          if el.key == key and s.kind == "page"), None)
            if where is not None:
                tile["screen"] = where[1].target if where[1].target in self.map.screens else where[0]
            tiles.append(tile)
        return tiles

    # -- goals

    def goals(self, wanted: list[ApkGoal]) -> JSONObject:
        out = {}
        for goal, key, value, query in wanted:
            var = self.var_of_key.get(key)
            if var is None:
                continue
            literal = ("true" if value else "false") if isinstance(value, bool) else f"'{value}'"
            out[goal] = {"expr": f"{var} == {literal}", "query": query}
        return out


def _button_bars(nodes: list[JSONObject]) -> list[JSONObject]:
    """Runs of action buttons sit side by side in one bar (like ActionButtonsPreference)."""
    out: list[JSONObject] = []
    run: list[JSONObject] = []
    for node in nodes + [{}]:
        if node.get("kind") == "button" and "visible_if" not in node:
            run.append(node)
            continue
        if len(run) > 1:
            out.append({"id": run[0]["id"] + ".bar", "kind": "bar", "height": 72, "children": run})
        else:
            out.extend(run)
        run = []
        if node:
            out.append(node)
    return out


def _buttons(*labels: str) -> list[JSONObject]:
    return [{"kind": "button", "text": label} for label in labels]


def _no_colon(text: str) -> str:
    # {var?yes:no} templates split on the first colon
    return text.replace(":", " -")


def _collapsed_summary(collapsed: list[MapElement]) -> str:
    """What AndroidX's ExpandButton shows: hidden titles, a titled category instead of its children."""
    parts: list[str] = []
    listed_categories: set[str] = set()
    for el in collapsed:
        if el.kind == "header":
            if el.title:
                parts.append(el.title)
                listed_categories.add(el.title)
            continue
        if el.category and el.category in listed_categories:
            continue
        if el.title:
            parts.append(el.title)
    return ", ".join(parts)
