"""Parse an apktool-decoded Settings APK into a :class:`UIMap`, with no device.

Input folder (see ``../shared/apps/oneplus-settings-android11/SOURCE.md``)::

    res/xml/*.xml            preference screens (PreferenceScreen roots)
    res/values/strings.xml   string resources (titles, summaries, keywords)
    res/values/arrays.xml    string arrays (ListPreference entries; arrays the decode left empty
                             take the stock AOSP values of the same name, see aosp_arrays.py)
    AndroidManifest.xml      activities, their intent filters and FRAGMENT_CLASS meta-data
    fragment_xml.json        {"fragments": {class: [xml names]}, "missing": [classes]}

How screens link, as in AOSP Settings: ``top_level_settings.xml`` is home; a
preference with ``android:fragment="CLASS"`` opens the XML that
``fragment_xml.json`` lists for CLASS; an ``<intent>`` child opens an activity
(by ``targetClass`` or by ``action`` through the manifest's intent filters)
whose ``com.android.settings.FRAGMENT_CLASS`` meta-data names the fragment.
Every link that cannot be followed is kept as an :class:`Unresolved` with its
reason; every ``@string`` that does not exist is reported, never guessed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from lxml import etree

from phonesim.worlds.aosp_arrays import stock_array
from phonesim.worlds.aosp_screens import add_code_built_screens
from phonesim.worlds.other_app_screens import add_other_app_screens
from phonesim.worlds.uimap import MapElement, MapScreen, UIMap, Unresolved
from verirank_core.errors import WorldError

__all__ = ["parse_apk", "StringTable", "Manifest", "element_kind", "xml_for_class", "HOME_XML"]

ANDROID = "{http://schemas.android.com/apk/res/android}"
#: settings:, app: (both are res-auto)
AUTO = "{http://schemas.android.com/apk/res-auto}"
HOME_XML = "top_level_settings"
FRAGMENT_META = "com.android.settings.FRAGMENT_CLASS"
#: AOSP dashboard category keys (CategoryKey) whose screen XML is known; tiles of
#: other categories are not placed
CATEGORY_SCREENS = {
    "com.android.settings.category.ia.homepage": HOME_XML,
    "com.android.settings.category.ia.system": "system_dashboard_fragment",
}
#: resolve_fragment's reason when the target came from :func:`xml_for_class`
GUESSED = "guessed from the class name"


# ------------------------------------------------------------------ strings

_ESCAPES = {"n": "\n", "t": " ", "'": "'", '"': '"', "\\": "\\", "@": "@", "?": "?"}
_POSITIONAL = re.compile(r"%(\d+)\$([sdfx])")
_TAGS = re.compile(r"<[^>]+>")


def _unescape(raw: str) -> str:
    """Android string-resource escaping: quotes, backslash escapes, HTML tags, positional args."""
    text = raw.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]  # "..." means keep whitespace as is; the quotes are not shown
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt == "u" and re.fullmatch(r"[0-9a-fA-F]{4}", text[i + 2:i + 6] or ""):
                out.append(chr(int(text[i + 2:i + 6], 16)))
                i += 6
                continue
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    text = "".join(out)
    text = _TAGS.sub("", text)  # <b>, <br/>, <xliff:g> ... kept as plain text
    # %1$s -> %s: readable, and the summary "%s" of a list stays recognisable
    text = _POSITIONAL.sub(lambda m: "%" + m.group(2), text).replace("%%", "%")
    return re.sub(r"[ \t]+", " ", text).strip()


@dataclass
class StringTable:
    """String and array resources, resolving ``@string/x`` chains and recording what is missing."""

    strings: dict[str, str] = field(default_factory=dict)
    arrays: dict[str, list[str]] = field(default_factory=dict)
    #: arrays declared without items (apktool writes undecodable arrays as empty <style> stubs)
    stub_arrays: set[str] = field(default_factory=set)
    #: (name, where) of every reference to a string that does not exist
    missing: list[tuple[str, str]] = field(default_factory=list)

    @classmethod
    def load(cls, values_dir: Path) -> "StringTable":
        table = cls()
        strings_xml = values_dir / "strings.xml"
        if not strings_xml.is_file():
            raise WorldError(f"{values_dir}: no strings.xml (expected res/values/strings.xml of a decoded APK)")
        root = _parse_xml(strings_xml)
        for el in root:
            if el.tag == "string" and el.get("name"):
                table.strings[el.get("name")] = _inner_text(el)
        arrays_xml = values_dir / "arrays.xml"
        if arrays_xml.is_file():
            for el in _parse_xml(arrays_xml):
                name = el.get("name") if isinstance(el.tag, str) else None
                if not name:
                    continue
                items = [_inner_text(item) for item in el if item.tag == "item"]
                if el.tag in ("string-array", "array", "integer-array") and items:
                    table.arrays[name] = items
                else:
                    table.stub_arrays.add(name)
        return table

    def text(self, value: Optional[str], where: str) -> str:
        """The display text of an attribute value: a literal, or a (chain of) ``@string`` references."""
        if not value:
            return ""
        seen: set[str] = set()
        while value.startswith("@") and "string/" in value:
            name = value.split("/", 1)[1]
            if value.startswith("@android:"):
                self.missing.append((value, where))  # framework strings are not in this APK
                return ""
            if name in seen:
                self.missing.append((value, f"{where} (reference cycle)"))
                return ""
            seen.add(name)
            if name not in self.strings:
                self.missing.append((value, where))
                return ""
            value = self.strings[name].strip()
        return _unescape(value)

    def plain(self, name: str) -> str:
        """The display text of string ``name`` when it is a literal in this APK, else "" (nothing recorded)."""
        raw = self.strings.get(name, "").strip()
        return _unescape(raw) if raw and not raw.startswith("@") else ""

    def array(self, ref: Optional[str], where: str) -> tuple[list[str], Optional[str]]:
        """The entries of ``@array/x`` as display texts, or ([], why they are unknown)."""
        if not ref:
            return [], "no android:entries (the options are set by code at run time)"
        name = ref.split("/", 1)[-1]
        if name in self.arrays:
            return [self.text(item, f"{where} @array/{name}") for item in self.arrays[name]], None
        if name in self.stub_arrays:
            return [], f"@array/{name} is an empty stub in arrays.xml (apktool did not decode its items)"
        return [], f"@array/{name} is not defined in arrays.xml"


def _inner_text(el: etree._Element) -> str:
    """The raw text of a resource, inline markup (<b>, <xliff:g>) flattened."""
    return "".join(el.itertext())


def _parse_xml(path: Path) -> etree._Element:
    try:
        return etree.parse(str(path), etree.XMLParser(remove_comments=True, resolve_entities=False)).getroot()
    except (etree.XMLSyntaxError, OSError) as exc:
        raise WorldError(f"{path}: not readable XML ({exc})") from exc


# ------------------------------------------------------------------ manifest

@dataclass
class Activity:
    name: str
    fragment: Optional[str] = None
    actions: list[str] = field(default_factory=list)
    target: Optional[str] = None  # activity-alias -> targetActivity
    label: Optional[str] = None
    #: dashboard tile meta-data: the screen category it is injected into, its summary and order
    category: Optional[str] = None
    summary: Optional[str] = None
    order: Optional[int] = None


@dataclass
class Manifest:
    package: str
    version: str = ""
    activities: dict[str, Activity] = field(default_factory=dict)

    @classmethod
    def load(cls, path: Path) -> "Manifest":
        if not path.is_file():
            raise WorldError(f"{path.parent}: no AndroidManifest.xml")
        root = _parse_xml(path)
        package = root.get("package") or ""
        man = cls(package=package, version=root.get("platformBuildVersionName") or
                  root.get(ANDROID + "versionName") or "")
        app = root.find("application")
        for el in (app if app is not None else []):
            if el.tag not in ("activity", "activity-alias"):
                continue
            name = man.qualify(el.get(ANDROID + "name") or "")
            act = Activity(name=name, target=man.qualify(el.get(ANDROID + "targetActivity") or "") or None,
                           label=el.get(ANDROID + "label"))
            for meta in el.findall("meta-data"):
                meta_name, value = meta.get(ANDROID + "name"), meta.get(ANDROID + "value")
                if meta_name == FRAGMENT_META:
                    act.fragment = value
                elif meta_name == "com.android.settings.category":
                    act.category = value
                elif meta_name == "com.android.settings.summary":
                    act.summary = value or meta.get(ANDROID + "resource")
                elif meta_name == "com.android.settings.order" and value and value.lstrip("-").isdigit():
                    act.order = int(value)
            for action in el.iterfind("intent-filter/action"):
                act.actions.append(action.get(ANDROID + "name") or "")
            man.activities[name] = act
        return man

    def qualify(self, name: str) -> str:
        """``.Foo`` and ``Settings$Foo`` are relative to the package."""
        if not name:
            return ""
        if name.startswith("."):
            return self.package + name
        if "." not in name.split("$", 1)[0]:
            return f"{self.package}.{name}"
        return name

    def fragment_of(self, name: str) -> Optional[str]:
        act = self.activities.get(name)
        if act is None:
            return None
        if act.fragment:
            return act.fragment
        if act.target and act.target in self.activities:
            return self.activities[act.target].fragment
        return None

    def handlers(self, action: str) -> list[Activity]:
        return [a for a in self.activities.values() if action in a.actions]


# ------------------------------------------------------------------ element kinds

_LIST_CLASSES = ("ListPreference", "DropDownPreference")
_DECORATIVE = ("Layout", "Video", "Lottie", "HeaderMargin", "Divider", "Space", "ActionButtons", "Illustration",
               "Banner", "Chart", "Donut", "Animation", "Graph", "Preview", "Summary")


def element_kind(tag: str) -> str:
    """What a preference class behaves like, from its (possibly vendor) class name.

    category | screen | switch | checkbox | list | radio | edit | slider | text | pref
    """
    short = tag.rsplit(".", 1)[-1]
    if short.endswith("PreferenceScreen"):
        return "screen"
    if short.endswith("Category"):
        return "category"
    if "CheckBox" in short:
        return "checkbox"
    if "Switch" in short:
        return "switch"
    if short.endswith(_LIST_CLASSES) or re.search(r"List\w*Preference$", short):
        return "list"
    if "RadioButton" in short:
        return "radio"
    if "EditText" in short or short == "EditPinPreference":
        return "edit"
    if "SeekBar" in short or "Seekbar" in short:
        return "slider"
    if "Footer" in short or "WallOfText" in short:
        return "text"
    return "pref"


#: plain preferences whose class name only sounds decorative (a summary cut to N lines)
_NOT_DECORATIVE = ("FixedLineSummaryPreference",)


def _is_decorative(tag: str) -> bool:
    short = tag.rsplit(".", 1)[-1]
    if short in _NOT_DECORATIVE:
        return False
    return any(word in short for word in _DECORATIVE) and "Preference" in short


# ------------------------------------------------------------------ parser

class _ApkParser:
    def __init__(self, root: Path):
        self.root = root
        self.xml_dir = root / "res" / "xml"
        if not self.xml_dir.is_dir():
            raise WorldError(f"{root}: not a decoded APK folder (no res/xml/ with preference screens)")
        self.strings = StringTable.load(root / "res" / "values")
        self.manifest = Manifest.load(root / "AndroidManifest.xml")
        frag_path = root / "fragment_xml.json"
        if not frag_path.is_file():
            raise WorldError(f"{root}: no fragment_xml.json (fragment class -> preference XML map)")
        try:
            frag = json.loads(frag_path.read_text(encoding="utf-8"))
            self.fragments: dict[str, list[str]] = dict(frag["fragments"])
            self.missing_classes: set[str] = set(frag.get("missing", []))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise WorldError(f"{frag_path}: expected {{'fragments': {{class: [xml]}}, 'missing': [...]}} ({exc})") from exc
        if not (self.xml_dir / f"{HOME_XML}.xml").is_file():
            raise WorldError(f"{self.xml_dir}: no {HOME_XML}.xml (the Settings home screen)")
        self.xml_names = {p.stem for p in self.xml_dir.glob("*.xml")}
        label = self.strings.strings.get("settings_label", "Settings")
        self.map = UIMap(app=self.manifest.package or "com.android.settings", home=HOME_XML)
        self.home_title = _unescape(label) or "Settings"
        self.skipped: dict[str, int] = {}

    # -- links

    def resolve_fragment(self, cls: str) -> tuple[Optional[str], str]:
        """(xml screen id, "") or (None, why not). A guessed target has reason ``GUESSED``."""
        short = cls.rsplit(".", 1)[-1]
        if cls in self.missing_classes:
            return None, f"fragment {short} is not in this APK"
        xmls = self.fragments.get(cls)
        if xmls is None:
            guess = xml_for_class(cls, self.xml_names)
            if guess is not None:
                return guess, GUESSED
            return None, f"fragment {short} has no entry in fragment_xml.json"
        if not xmls:
            return None, f"fragment {short} builds its screen from layouts, not a preference XML"
        if not (self.xml_dir / f"{xmls[0]}.xml").is_file():
            return None, f"fragment {short} loads {xmls[0]}.xml, which is not in res/xml"
        return xmls[0], ""

    def resolve_intent(self, intent: etree._Element, where: str) -> tuple[Optional[str], str, str]:
        """(screen, target description, reason) for an <intent> child."""
        package = self.strings.text(intent.get(ANDROID + "targetPackage"), where)
        target_class = self.strings.text(intent.get(ANDROID + "targetClass"), where)
        action = intent.get(ANDROID + "action") or ""
        described = target_class or action or "<intent>"
        if package and package != self.manifest.package:
            return None, described, f"opens another app ({package})"
        if intent.get(ANDROID + "targetClass") and not target_class:
            return None, intent.get(ANDROID + "targetClass") or "", \
                "target class is an empty string resource (filled in by the device's configuration)"
        if target_class:
            name = self.manifest.qualify(target_class)
            if name not in self.manifest.activities:
                return None, described, f"activity {name.rsplit('.', 1)[-1]} is not declared in the manifest"
            fragment = self.manifest.fragment_of(name)
            if not fragment:
                return None, described, f"activity {name.rsplit('.', 1)[-1]} has no FRAGMENT_CLASS (custom activity)"
        elif action == "android.intent.action.MAIN":
            return None, described, "intent names only the MAIN action (no target to resolve)"
        elif action:
            handlers = self.manifest.handlers(action)
            if not handlers:
                return None, described, "no activity in this APK handles the action (another app's screen)"
            fragment = next((self.manifest.fragment_of(a.name) for a in handlers
                             if self.manifest.fragment_of(a.name)), None)
            if not fragment:
                return None, described, f"activity {handlers[0].name.rsplit('.', 1)[-1]} has no FRAGMENT_CLASS " \
                                        "(custom activity)"
        else:
            return None, described, "intent names neither a class nor an action"
        screen, reason = self.resolve_fragment(fragment)
        return screen, f"{described} -> {fragment.rsplit('.', 1)[-1]}", reason

    # -- tiles injected by the manifest

    def inject_tiles(self) -> None:
        """Add the dashboard tiles other activities contribute (``com.android.settings.category``).

        Only categories whose screen is known (:data:`CATEGORY_SCREENS`) and tiles
        hosted by Settings itself (a FRAGMENT_CLASS) are added; tiles that start
        another app's action depend on that app being installed and are reported.
        """
        for act in self.manifest.activities.values():
            screen = self.map.screens.get(CATEGORY_SCREENS.get(act.category or "", ""))
            if screen is None:
                continue
            where = f"AndroidManifest.xml {act.name.rsplit('.', 1)[-1]}"
            title = self.strings.text(act.label, where + " label")
            if not act.fragment:
                self.skipped["tile without FRAGMENT_CLASS"] = self.skipped.get("tile without FRAGMENT_CLASS", 0) + 1
                continue
            item = MapElement(key=act.name.rsplit("$", 1)[-1], kind="link", title=title, widget="tile",
                              summary=self.strings.text(act.summary, where + " summary"), order=act.order)
            fragment = self.strings.text(act.fragment, where) if act.fragment.startswith("@") else act.fragment
            target, reason = self.resolve_fragment(fragment)
            if target:
                item.target, item.guessed = target, reason == GUESSED
            else:
                item.unresolved = reason
                self.map.unresolved.append(Unresolved(screen=screen.id, element=title,
                                                      target=fragment.rsplit(".", 1)[-1], reason=reason))
            _insert_by_order(screen, item)

    # -- screens

    def parse_all(self) -> UIMap:
        names = sorted(p.stem for p in self.xml_dir.glob("*.xml"))
        for name in names:
            root = _parse_xml(self.xml_dir / f"{name}.xml")
            if not isinstance(root.tag, str) or element_kind(root.tag) != "screen":
                continue  # shortcuts, appwidget, paths...: not preference screens
            title = self.home_title if name == HOME_XML else self.strings.text(root.get(ANDROID + "title"),
                                                                               f"{name}.xml title")
            self.parse_screen(name, root, title)
        self.inject_tiles()
        # screens the app fills in code get their content from AOSP behaviour (aosp_screens.py)
        add_code_built_screens(self.map, self.strings)
        # other apps' screens that Settings opens (a keyboard's settings, TalkBack): other_app_screens.py
        add_other_app_screens(self.map)
        self.fill_titles()
        self.map.missing_strings = list(self.strings.missing)
        self.map.skipped = dict(sorted(self.skipped.items()))
        return self.map

    def parse_screen(self, screen_id: str, root: etree._Element, title: str) -> MapScreen:
        screen = MapScreen(id=screen_id, title=title, source=f"res/xml/{screen_id.split('__')[0]}.xml",
                           keywords=self.keywords(root, f"{screen_id}.xml"))
        screen.expanded_count = _expanded_count(root)
        self.map.screens[screen_id] = screen
        self.add_children(screen, root, category="")
        if screen.expanded_count is not None:
            _collapse(screen.elements, screen.expanded_count, section=screen_id)
        _drop_empty_headers(screen, self.skipped)
        return screen

    def add_children(self, screen: MapScreen, group: etree._Element, category: str) -> None:
        for index, (order, el) in enumerate(_ordered(group)):
            kind = element_kind(el.tag)
            where = f"{screen.source} {el.get(ANDROID + 'key') or el.tag}"
            if el.get(AUTO + "isPreferenceVisible") == "false":
                continue
            title = self.strings.text(el.get(ANDROID + "title"), where + " title")
            if kind == "category":
                key = el.get(ANDROID + "key") or f"category_{len(screen.elements)}"
                if title:
                    screen.elements.append(MapElement(key=key, kind="header", title=title, widget=_short(el.tag),
                                                      selectable=False, category=title))
                first = len(screen.elements)
                self.add_children(screen, el, category=title or category)
                count = _expanded_count(el)
                if count is not None:
                    _collapse(screen.elements[first:], count, section=key)
                continue
            if not title or (_is_decorative(el.tag) and kind == "pref"):
                self.skipped[_short(el.tag)] = self.skipped.get(_short(el.tag), 0) + 1
                continue
            key = el.get(ANDROID + "key") or f"{_short(el.tag)}_{len(screen.elements)}"
            if any(e.key == key for e in screen.elements):
                key = f"{key}_{len(screen.elements)}"
            summary = self.strings.text(el.get(ANDROID + "summary"), where + " summary")
            item = MapElement(
                key=key, kind=kind if kind != "screen" else "pref", title=title, summary=summary,
                keywords=self.keywords(el, where), widget=_short(el.tag), category=category,
                selectable=el.get(ANDROID + "selectable") != "false",
                enabled=el.get(ANDROID + "enabled") != "false",
                dependency=el.get(ANDROID + "dependency"), order=order,
                summary_on=self.strings.text(el.get(ANDROID + "summaryOn"), where + " summaryOn"),
                summary_off=self.strings.text(el.get(ANDROID + "summaryOff"), where + " summaryOff"),
            )
            item.ringtone_type = el.get(ANDROID + "ringtoneType") or ""
            default = el.get(ANDROID + "defaultValue")
            if default is not None:
                item.default = default.lower() == "true" if kind in ("switch", "checkbox") else default
            if kind == "list":
                entries_ref = el.get(ANDROID + "entries")
                item.entries, item.entries_problem = self.strings.array(entries_ref, where)
                values, _ = self.strings.array(el.get(ANDROID + "entryValues"), where)
                stock = stock_array(entries_ref) if not item.entries else None
                if stock is not None:
                    # the decode left the array empty; the build keeps the stock AOSP one of that name
                    item.entries = list(stock.entries)
                    values = list(stock.values) if len(stock.values) == len(stock.entries) else []
                    item.entries_source = f"{stock.source} @array/{entries_ref.split('/', 1)[-1]} " \
                                          f"(the decode's array is empty: {item.entries_problem})"
                    item.entries_problem = None
                if default is not None and values and default in values and item.entries:
                    item.default = item.entries[values.index(default)]
            self.link(screen, el, item, where, nested_index=index)
            screen.elements.append(item)

    def link(self, screen: MapScreen, el: etree._Element, item: MapElement, where: str, nested_index: int) -> None:
        """Set ``item.target`` from android:fragment, an <intent> child, or a nested PreferenceScreen."""
        fragment = el.get(ANDROID + "fragment")
        intent = el.find("intent")
        if fragment:
            target, reason = self.resolve_fragment(fragment)
            described = fragment.rsplit(".", 1)[-1]
        elif intent is not None:
            target, described, reason = self.resolve_intent(intent, where)
        elif element_kind(el.tag) == "screen" and len(el):
            # an old-style nested screen: its children form a sub-page
            sub_id = f"{screen.id}__{item.key}"
            self.parse_screen(sub_id, el, item.title)
            item.kind, item.target = "link", sub_id
            return
        else:
            return
        if item.kind == "pref":
            item.kind = "link"
        if target:
            item.target = target
            item.guessed = reason == GUESSED
        else:
            item.unresolved = reason
            self.map.unresolved.append(Unresolved(screen=screen.id, element=item.title, target=described,
                                                  reason=reason))

    def keywords(self, el: etree._Element, where: str) -> list[str]:
        raw = self.strings.text(el.get(AUTO + "keywords"), where + " keywords")
        return [k.strip() for k in re.split(r"[,;]", raw) if k.strip()]

    def fill_titles(self) -> None:
        """Screens without android:title take the title of the row that opens them (as Settings does)."""
        for screen in self.map.screens.values():
            for el in screen.elements:
                target = self.map.screens.get(el.target or "")
                if target is not None and not target.title:
                    target.title = el.title


def _short(tag: str) -> str:
    return tag.rsplit(".", 1)[-1]


def _ordered(group: etree._Element) -> list[tuple[Optional[int], etree._Element]]:
    """Preference children in display order: explicit android:order, else declaration order.

    Mirrors AndroidX's orderingFromXml: preferences without an order get
    0, 1, 2... in the order they are declared, then all are sorted stably.
    """
    children = [c for c in group if isinstance(c.tag, str) and c.tag not in ("intent", "extra")]
    keyed = []
    counter = 0
    for i, child in enumerate(children):
        order = child.get(ANDROID + "order")
        if order is not None and order.lstrip("-").isdigit():
            keyed.append((int(order), i, int(order), child))
        else:
            keyed.append((counter, i, None, child))
            counter += 1
    return [(given, c) for _, _, given, c in sorted(keyed, key=lambda t: (t[0], t[1]))]


def _insert_by_order(screen: MapScreen, item: MapElement) -> None:
    """Put an injected tile where its order puts it among elements that have an android:order."""
    if item.order is None:
        screen.elements.append(item)
        return
    for i, el in enumerate(screen.elements):
        if el.order is not None and el.order > item.order:
            screen.elements.insert(i, item)
            return
    screen.elements.append(item)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_CLASS_SUFFIXES = ("_fragment", "_dashboard", "_activity", "_settings", "_preference", "_prefs", "_ui")


def xml_for_class(cls: str, xml_names: set[str]) -> Optional[str]:
    """The preference XML a fragment class most likely loads, by AOSP naming convention.

    ``LanguageAndInputSettings`` -> ``language_and_input``;
    ``DevelopmentSettingsDashboardFragment`` -> ``development_settings``: the
    snake-cased class name, dropping one trailing _fragment/_dashboard/_settings...
    at a time until an XML of that name exists. Used only for classes that
    fragment_xml.json does not list (on the OnePlus APK this rule agrees with
    every one of the 87 classes fragment_xml.json does list and it can name).
    """
    short = cls.rsplit(".", 1)[-1].split("$")[-1]
    name = _CAMEL.sub("_", short).lower()
    while name:
        if name in xml_names:
            return name
        for suffix in _CLASS_SUFFIXES:
            if name.endswith(suffix):
                name = name[: -len(suffix)]
                break
        else:
            return None
    return None


def _expanded_count(el: etree._Element) -> Optional[int]:
    count = el.get(AUTO + "initialExpandedChildrenCount")
    return int(count) if count and count.isdigit() else None


def _collapse(elements: list[MapElement], count: int, section: str) -> None:
    """Mark what AndroidX hides behind "Advanced": everything after the first ``count`` non-header elements."""
    hidden = []
    shown = 0
    for el in elements:
        if el.collapsed:
            continue  # already in a nested section
        if shown >= count:
            hidden.append(el)
        if el.kind != "header":
            shown += 1
    if any(el.kind != "header" for el in hidden):  # nothing to hide: no Advanced row either
        for el in hidden:
            el.collapsed, el.section = True, section


def _drop_empty_headers(screen: MapScreen, skipped: dict[str, int]) -> None:
    """Category headers with nothing under them (filled by code at run time) are not shown."""
    kept = []
    for i, el in enumerate(screen.elements):
        following = screen.elements[i + 1] if i + 1 < len(screen.elements) else None
        if el.kind == "header" and (following is None or following.kind == "header"):
            skipped["empty category"] = skipped.get("empty category", 0) + 1
            continue
        kept.append(el)
    screen.elements = kept


def parse_apk(root: Path | str) -> UIMap:
    """The UI map of a decoded Settings APK folder (raises :class:`WorldError` on a malformed folder)."""
    root = Path(root)
    if not root.is_dir():
        raise WorldError(f"{root}: no such folder (expected an apktool-decoded APK)")
    return _ApkParser(root).parse_all()
