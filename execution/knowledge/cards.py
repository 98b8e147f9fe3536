"""Knowledge cards: what a page may call a setting, and what this device calls it.

A card says "a page's *phrase* names the row this device titles *title*", with
the *source* of that claim and the *path* (screen titles from the app's home)
where the row lives. Cards come from data, cheapest claim first:

1. **app resources** (:func:`cards_from_resources`, an apktool-decoded APK):
   * a vendor title string whose stock name also exists: the row titled
     ``@string/oneplus_network_dashboard_title`` ("Wi-Fi & network") and the
     unused stock ``network_dashboard_title`` ("Network & internet");
   * a row whose ``android:key`` is the name of a stock string: key
     ``dark_ui_mode`` (title "Dark mode") and string ``dark_ui_mode`` ("Dark theme");
   * multi-word search keywords (``settings:keywords``): "Auto brightness" for
     "Adaptive Brightness";
   * a short title with one of its one-word search keywords, as Settings search finds the row:
     "Storage space" for "Storage". Such a card (source ``search: ...``) tells the judge what a
     question asks for; the agent does not look it up, as no page calls the row so;
   * the same ``android:key`` or the same ``android:fragment`` under different titles;
2. **the UI map** (:func:`cards_from_map`): search keywords of a world's rows, and the
   path to every card's title;
3. **a documented table** (:data:`TABLE`) for renames no resource shows, each with its source.

Cards are stored per app and device (``datasets/knowledge/<world>.json``, built by
``python -m execution.knowledge build``) and retrieved by
:func:`knowledge_for_device`. They hold names and paths only, never goals.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Optional

from execution.predict.match import GENERIC_ONE_WORD, lexical_score, normalise
from verirank_core.device import Device
from verirank_core.execution_records import Trajectory
from verirank_core.resources import KNOWLEDGE_DIR
from verirank_core.text import stem

__all__ = ["Card", "KnowledgeBase", "TABLE", "cards_from_resources", "cards_from_map", "build_knowledge",
           "load_knowledge", "knowledge_for_device", "knowledge_for_world", "knowledge_for_trajectory",
           "cards_for_identity", "KNOWLEDGE_DIR"]


#: a page's phrase must spell a card's phrase this well to retrieve it (near-equal, not loose)
PHRASE_MATCH = 0.9
#: the source of a card made of a row's title and one of its search keywords ("Storage space"):
#: it says what a question may ask for (the judge reads it), not what a page may call the row,
#: so the agent never taps by it
SEARCH_SOURCE = "search: "
#: vendor prefixes of title strings whose stock name may also be in the APK
_VENDOR_PREFIXES = ("oneplus_", "op_", "opcustom_", "oem_", "oneplus_settings_")
_ANDROID = "{http://schemas.android.com/apk/res/android}"
_SETTINGS = "{http://schemas.android.com/apk/res-auto}"


@dataclass(frozen=True)
class Card:
    #: what a page may say
    phrase: str
    #: what this device shows
    title: str
    #: where the claim comes from (a resource, the UI map, the table row's reference)
    source: str
    #: screen titles from the app's home to the screen that shows ``title`` (empty: unknown or home)
    path: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["path"] = list(self.path)
        return d


#: Renames between stock Android 11 / other vendors and OxygenOS 11 that no resource of the
#: decoded APK shows. (phrase, OxygenOS title, source)
TABLE: tuple[tuple[str, str, str], ...] = (
    ("Themes", "Customization",
     "OxygenOS 11 groups themes, accent colour and fonts under Customization (APK: key "
     "oneplus_top_level_theme_settings, fragment OPThemeSettings)"),
    ("Personalization", "Customization", "same as 'Themes'"),
    ("Connections", "Wi-Fi & network",
     "Samsung One UI names the network page Connections (datasets/worlds/oneui5-settings.yaml)"),
    ("Mobile hotspot", "Wi‑Fi hotspot",
     "Samsung One UI's name for the hotspot (oneui5-settings.yaml); OxygenOS titles it "
     "wifi_hotspot_checkbox_text"),
    ("Hotspot", "Hotspot & tethering", "stock Android 11 quick-settings tile 'Hotspot' opens this page"),
    ("Blue light filter", "Vision comfort",
     "Samsung One UI's name for the night light; OxygenOS titles it op_night_display_title"),
    ("Software update", "System Updates",
     "Samsung / stock Android 12+ wording; OxygenOS 11 titles it system_update_settings_list_item_title"),
    ("System update", "System Updates", "stock Android 11 wording (singular)"),
    ("Lock screen", "Security & Lock Screen",
     "stock Android 11 has a separate Lock screen page; OxygenOS 11 merges it into Security & Lock Screen"),
    ("Biometrics and security", "Security & Lock Screen", "Samsung One UI page name (oneui5-settings.yaml)"),
    ("Sound", "Sounds & vibration", "stock Android 11 top-level 'Sound'"),
    ("Display size and text", "Display Size", "stock Android 12+ merged page; OxygenOS 11 keeps Display Size"),
    ("Font size and style", "Font Size", "Samsung One UI page name (oneui5-settings.yaml)"),
    ("Automatic brightness", "Adaptive Brightness",
     "stock Android 9 title; this APK still holds it as the unused @string/automatic_brightness"),
    ("Portable hotspot", "Hotspot & tethering",
     "stock title @string/tether_settings_title_wifi; OxygenOS shows the hotspot under Hotspot & tethering"),
    ("Screen brightness", "Adaptive Brightness",
     "pages about automatic brightness name the brightness section; OxygenOS's Display shows only "
     "the Adaptive Brightness switch and the slider"),
)


class KnowledgeBase:
    """The cards of one app on one device, with phrase lookup."""

    def __init__(self, cards: Iterable[Card], app: str = "", device: Optional[dict[str, Any]] = None,
                 name: str = ""):
        uniq: dict[tuple[str, str], Card] = {}
        for c in cards:
            key = (normalise(c.phrase), normalise(c.title))
            # "Do not disturb" is "Settings" in Gaming mode: a generic title names no item a
            # reader could look for (and "Settings" is every Settings screen's own title)
            if key[1] in GENERIC_ONE_WORD:
                continue
            if key[0] and key[1] and key[0] != key[1] and key not in uniq:
                uniq[key] = c
        self.cards = list(uniq.values())
        self.app = app
        self.device = dict(device or {})
        self.name = name

    def __len__(self) -> int:
        return len(self.cards)

    def __repr__(self) -> str:
        return f"KnowledgeBase({self.name or self.app!r}, cards={len(self.cards)})"

    def lookup(self, phrase: str) -> list[Card]:
        """Cards whose phrase a page's ``phrase`` spells (near-equal after normalisation), best first."""
        if not phrase or not normalise(phrase):
            return []
        scored = [(lexical_score(phrase, c.phrase), c) for c in self.cards if not c.source.startswith(SEARCH_SOURCE)]
        hits = [(s, c) for s, c in scored if s >= PHRASE_MATCH and
                # "Sleep" must not retrieve every card containing "sleep": the phrase covers the card
                lexical_score(c.phrase, phrase) >= PHRASE_MATCH]
        hits.sort(key=lambda sc: (-sc[0], _source_rank(sc[1].source)))
        return [c for _, c in hits]

    def titles(self, phrase: str) -> list[str]:
        """This device's titles for ``phrase`` (distinct, best first)."""
        out: list[str] = []
        for c in self.lookup(phrase):
            if c.title not in out:
                out.append(c.title)
        return out

    def to_json(self) -> dict[str, Any]:
        return {"app": self.app, "device": self.device, "name": self.name,
                "cards": [c.to_json() for c in self.cards]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "KnowledgeBase":
        cards = [Card(c["phrase"], c["title"], c.get("source", ""), tuple(c.get("path", ())))
                 for c in data.get("cards", [])]
        return cls(cards, data.get("app", ""), data.get("device"), data.get("name", ""))


def _source_rank(source: str) -> int:
    """Resources naming the row itself first, then the table, then search keywords."""
    if "keywords" in source:
        return 2
    return 1 if source.startswith("table") else 0


def _unambiguous_keywords(cards: list[Card]) -> list[Card]:
    """A search keyword shared by rows with different titles names none of them."""
    titles: dict[str, set[str]] = {}
    for c in cards:
        if "keywords" in c.source:
            titles.setdefault(normalise(c.phrase), set()).add(normalise(c.title))
    return [c for c in cards if "keywords" not in c.source or len(titles[normalise(c.phrase)]) == 1]


# --- cards from the decoded APK ---------------------------------------------------------

def _words(text: str) -> int:
    return len(normalise(text).split())


#: phrases too generic to name one row
_GENERIC = frozenset({"settings", "setting", "more", "advanced", "other", "general", "default", "on", "off",
                      "none", "title", "summary", "options", "more settings", "system", "device"})


def _usable(phrase: str, title: str) -> bool:
    p, t = normalise(phrase), normalise(title)
    return bool(p and t) and p != t and p not in _GENERIC and "%" not in phrase and 1 <= _words(phrase) <= 6 and _words(title) <= 8


def cards_from_resources(apk_dir: Path | str) -> list[Card]:
    """Rename cards from an apktool-decoded Settings APK (res/xml + res/values/strings.xml)."""
    from lxml import etree

    from phonesim.worlds.apk_map import StringTable

    root = Path(apk_dir)
    table = StringTable.load(root / "res" / "values")
    by_key: dict[str, set[str]] = {}
    by_fragment: dict[str, set[str]] = {}
    cards: list[Card] = []
    composed: list[Card] = []
    titles_seen: set[str] = set()
    xml_files = sorted((root / "res" / "xml").glob("*.xml"))
    for path in xml_files:
        try:
            tree = etree.parse(str(path))
        except etree.XMLSyntaxError:
            continue
        for el in tree.iter():
            if not isinstance(el.tag, str):
                continue
            raw_title = el.get(f"{_ANDROID}title") or ""
            title = table.text(raw_title, path.name) if raw_title else ""
            if not title:
                continue
            key = el.get(f"{_ANDROID}key") or ""
            where = f"res/xml/{path.name}"
            name = raw_title.split("/", 1)[1] if raw_title.startswith("@string/") else ""
            # 1. a vendor title string next to its stock twin
            for prefix in _VENDOR_PREFIXES:
                if name.startswith(prefix):
                    stock = name[len(prefix):]
                    for cand in (stock, stock + "_title", re.sub(r"_title$", "", stock)):
                        value = table.strings.get(cand)
                        if value:
                            value = table.text(f"@string/{cand}", where)
                            if _usable(value, title):
                                cards.append(Card(value, title, f"{where}: title @string/{name}; stock "
                                                                f"@string/{cand} = {value!r}"))
                            break
            # 2. the row's key is a stock string's name
            if key:
                for cand in (key, key + "_title", re.sub(r"^(top_level_|toggle_|oneplus_|op_)", "", key)):
                    if cand != name and cand in table.strings:
                        value = table.text(f"@string/{cand}", where)
                        if _usable(value, title) and not value.endswith((".", "?")):
                            cards.append(Card(value, title, f"{where}: key {key!r}; @string/{cand} = {value!r}"))
                        break
                by_key.setdefault(key, set()).add(title)
            # 3. multi-word search keywords; and a short title with a one-word keyword, as
            # Settings search finds the row by both ("storage space": the Storage page's keywords
            # hold "space"; the keyword alone, "ringtone" for Sound, would name too much)
            raw_kw = el.get(f"{_SETTINGS}keywords") or ""
            if raw_kw:
                for kw in table.text(raw_kw, where).split(","):
                    kw = kw.strip()
                    if _words(kw) >= 2 and _usable(kw, title):
                        cards.append(Card(kw, title, f"{where}: settings:keywords of key {key!r}"))
                    elif _words(kw) == 1 and _words(title) <= 2 and stem(normalise(kw)) not in map(
                            stem, normalise(title).split()):  # "Accounts" with "account" adds no word
                        composed.append(Card(f"{title} {kw}", title,
                                             f"{SEARCH_SOURCE}{where}: title {title!r} and its settings:keywords {kw!r}"))
            titles_seen.add(normalise(title))
            frag = el.get(f"{_ANDROID}fragment") or ""
            if frag:
                by_fragment.setdefault(frag, set()).add(title)
    # a composed phrase that another row's title holds names that row, not this one
    cards += [c for c in composed if _usable(c.phrase, c.title) and not any(
        set(normalise(c.phrase).split()) <= set(t.split()) for t in titles_seen)]
    # 4. one key or one fragment under several titles: each names the others
    for what, groups in (("android:key", by_key), ("android:fragment", by_fragment)):
        for ident, titles in groups.items():
            if 1 < len(titles) <= 4:
                for a in sorted(titles):
                    for b in sorted(titles):
                        if _usable(a, b):
                            cards.append(Card(a, b, f"res/xml: {what} {ident!r} titled {a!r} and {b!r}"))
    return cards


def cards_from_map(uimap: Any) -> list[Card]:
    """Cards from a UI map's rows: multi-word search keywords of each row."""
    cards: list[Card] = []
    for sid, screen in uimap.screens.items():
        for el in screen.elements:
            for kw in el.keywords:
                for part in kw.split(","):
                    part = part.strip()
                    if el.title and _words(part) >= 2 and _usable(part, el.title):
                        cards.append(Card(part, el.title, f"ui map: keywords of {sid}/{el.key}"))
    return cards


def _with_paths(cards: list[Card], uimap: Any) -> list[Card]:
    """Attach the UI map's path to each card; drop cards whose title this app never shows."""
    if uimap is None:
        return cards
    out: list[Card] = []
    routes: dict[str, Optional[tuple[str, ...]]] = {}
    for c in cards:
        if c.title not in routes:
            route = uimap.route_to(c.title)
            routes[c.title] = None if route is None else tuple(h.tap for h in route)
        path = routes[c.title]
        if path is None:
            continue  # a title no reachable screen shows is no help on this device
        out.append(Card(c.phrase, c.title, c.source, path))
    return out


def build_knowledge(uimap: Any, apk_dir: Optional[Path | str] = None, *, name: str = "",
                    device: Optional[dict[str, Any]] = None, table: bool = True) -> KnowledgeBase:
    """All cards for one app on one device: resources (if given), the map's keywords, the table."""
    cards: list[Card] = []
    if apk_dir is not None:
        cards += cards_from_resources(apk_dir)
    cards += cards_from_map(uimap)
    if table:
        cards += [Card(p, t, f"table: {s}") for p, t, s in TABLE]
    return KnowledgeBase(_with_paths(_unambiguous_keywords(cards), uimap), getattr(uimap, "app", ""), device, name)


# --- retrieval ----------------------------------------------------------------------------

_CACHE: dict[str, Optional[KnowledgeBase]] = {}
_LOCK = threading.Lock()


def load_knowledge(path: Path | str) -> KnowledgeBase:
    return KnowledgeBase.from_json(json.loads(Path(path).read_text("utf-8")))


def knowledge_for_world(world: Optional[str]) -> Optional[KnowledgeBase]:
    """The cards stored for a world name (``datasets/knowledge/<name>.json``), or None."""
    if not world:
        return None
    path = KNOWLEDGE_DIR / f"{Path(str(world)).name.removesuffix('.json')}.json"
    key = str(path.resolve())
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = load_knowledge(path) if path.is_file() else None
        return _CACHE[key]


def cards_for_identity(model: Optional[str], os_version: Optional[str], manufacturer: Optional[str] = None,
                       has_app: Optional[Callable[[str], bool]] = None) -> Optional[Path]:
    """The stored cards file made for this model on this Android version, or None.

    The device, not the way it is reached, decides: a phone over adb gets the cards
    of its model as the simulator of that model does. ``manufacturer`` is checked when
    known; ``has_app(package)`` says whether the cards' app is there (None: not asked)."""
    want = [(v or "").strip().lower() for v in (manufacturer, model, os_version)]
    if not (want[1] and want[2]):
        return None
    for path in sorted(KNOWLEDGE_DIR.glob("*.json")):
        key = str(path.resolve())
        with _LOCK:
            if key not in _CACHE:
                _CACHE[key] = load_knowledge(path)
            kb = _CACHE[key]
        if kb is None:
            continue
        made_for = [str(kb.device.get(k) or "").strip().lower() for k in ("manufacturer", "model", "os_version")]
        if made_for[1:] != want[1:] or (want[0] and made_for[0] != want[0]):
            continue
        if kb.app and has_app is not None and not has_app(kb.app):
            continue
        return path
    return None


def _cards_for_device(device: Device) -> Optional[Path]:
    """:func:`cards_for_identity` of what ``device.info()`` reports."""
    info = device.info()
    return cards_for_identity(info.model, info.os_version, info.manufacturer or None,
                              has_app=lambda package: package in device.info((package,)).app_versions)


def knowledge_for_trajectory(trajectory: Trajectory) -> Optional[KnowledgeBase]:
    """The cards of the device an episode ran on, for reading it afterwards (the judge): the
    world's by name, else those made for the model and Android version the device reported."""
    found = knowledge_for_world(trajectory.world)
    if found is not None:
        return found
    path = cards_for_identity(getattr(trajectory, "device_model", None), trajectory.os_version)
    if path is None:
        return None
    kb = _CACHE.get(str(path.resolve()))
    if kb is not None and trajectory.app and kb.app and kb.app != trajectory.app:
        return None
    return kb


def knowledge_for_device(device: Device, configured: Optional[str] = None) -> tuple[Optional[KnowledgeBase], str]:
    """(cards, where they came from) for an episode on ``device``.

    ``configured`` (``execution.agent.knowledge``, a cards file) wins; a simulated
    device gets ``datasets/knowledge/<world name>.json`` when it exists; otherwise (a
    phone over adb, or a world without its own file) the device gets the stored cards
    made for its manufacturer, model and Android version, as it reports them, when
    their app is installed. Cards are for
    one app on one device: a device whose manufacturer differs from the file's gets none.
    """
    if configured:
        path = Path(configured)
    else:
        name = device.world.name if device.world is not None else None
        named = KNOWLEDGE_DIR / f"{Path(str(name)).name}.json" if name else None
        found = named if named is not None and named.is_file() else _cards_for_device(device)
        if found is None:
            return None, f"no knowledge cards for {name or 'this device'}: set execution.agent.knowledge"
        path = found
    key = str(path.resolve())
    with _LOCK:
        if key not in _CACHE:
            _CACHE[key] = load_knowledge(path) if path.is_file() else None
        kb = _CACHE[key]
    if kb is None:
        return None, f"no knowledge cards at {path}"
    maker = (kb.device.get("manufacturer") or "").lower()
    world = device.world
    have = (getattr(getattr(world, "device", None), "manufacturer", "") or "").lower() if world else ""
    if maker and have and maker != have:
        return None, f"cards in {path.name} are for {kb.device.get('manufacturer')}, not {have}"
    return kb, f"cards {path.name} ({len(kb)})"
