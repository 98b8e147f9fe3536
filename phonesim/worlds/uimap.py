"""A UI map: an app's screens, what each shows, and which element opens which screen.

The map is the static knowledge an agent can plan with (UICompass-style):
"from the screen I am on, what is the shortest route to a screen that shows
*Dark mode*?" It is built either from a decoded APK
(:func:`phonesim.worlds.apk_map.parse_apk`) or from any simulator world
(:func:`map_from_world`); :func:`phonesim.worlds.sources.build_ui_map` picks the right one.

A map never contains goals: it describes what a user can see and tap, so
agents may read it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Iterable, Iterator, Optional, Union

from verirank_core.json_types import JSONObject
from verirank_core.text import fold_unicode

if TYPE_CHECKING:
    from phonesim.world import Node, World

__all__ = ["MapElement", "MapScreen", "Unresolved", "Hop", "UIMap", "map_from_world",
           "normalise_label"]


@dataclass
class MapElement:
    """One thing on a screen: a row, a switch, a header, a list..."""

    #: unique within its screen (the preference key, or a generated one)
    key: str
    #: link | switch | checkbox | list | radio | edit | slider | text | header | pref | button | input
    kind: str
    title: str = ""
    summary: str = ""
    keywords: list[str] = field(default_factory=list)
    #: the source widget class (short name), e.g. "SwitchPreference", "button"
    widget: str = ""
    #: the screen a tap opens (a page or a dialog id), if any
    target: Optional[str] = None
    #: the title of the category header above it
    category: str = ""
    #: hidden until the "Advanced" row of its section is tapped
    collapsed: bool = False
    #: the collapsible group (screen or category key) that hides it
    section: str = ""
    #: list preferences: the options; entries_problem says why they are unknown
    entries: list[str] = field(default_factory=list)
    entries_problem: Optional[str] = None
    #: where the entries come from when not from the app's own resources (stock AOSP arrays)
    entries_source: Optional[str] = None
    #: links that could not be followed: why
    unresolved: Optional[str] = None
    #: the target was found by the class-name rule, not by fragment_xml.json
    guessed: bool = False
    #: android:order (display position among siblings), when the XML gives one
    order: Optional[int] = None
    selectable: bool = True
    enabled: bool = True
    #: the key of the switch this element depends on (greyed out while it is off)
    dependency: Optional[str] = None
    #: android:defaultValue: a switch's or checkbox's bool, else the text
    default: Union[bool, str, None] = None
    summary_on: str = ""
    summary_off: str = ""
    #: DefaultRingtonePreference: android:ringtoneType (ringtone | notification | alarm)
    ringtone_type: str = ""
    #: where a link or content the app makes in code comes from (AOSP behaviour, see aosp_screens.py)
    built_from: str = ""
    #: buttons whose action needs a confirm dialog: title, message, button (the confirm label)
    confirm: Optional[dict[str, str]] = None
    #: a tap stores a value in a setting of ``UIMap.choice_settings``: (setting key, value)
    sets: Optional[tuple[str, str]] = None
    #: after its effect, a tap closes this many screens (an activity that finishes itself)
    closes: int = 0
    #: the row's summary shows the current value of this setting of ``UIMap.choice_settings``
    shows: str = ""
    #: enabled only while a setting of ``UIMap.choice_settings`` has one of these values: (key, values)
    enabled_when: Optional[tuple[str, tuple[str, ...]]] = None

    def labels(self) -> list[str]:
        """Every text a user could use to name this element."""
        return [t for t in (self.title, self.summary, *self.keywords) if t]


@dataclass
class MapScreen:
    id: str
    title: str
    #: where it comes from (a preference XML name, a UTG state hash...)
    source: str = ""
    kind: str = "page"  # page | dialog | placeholder
    elements: list[MapElement] = field(default_factory=list)
    keywords: list[str] = field(default_factory=list)
    #: settings:initialExpandedChildrenCount (None: everything shown)
    expanded_count: Optional[int] = None
    #: content the app builds in code, filled from AOSP behaviour: the source (see aosp_screens.py)
    built_from: str = ""

    def element(self, key: str) -> MapElement:
        for el in self.elements:
            if el.key == key:
                return el
        raise KeyError(f"screen {self.id!r} has no element {key!r}")


@dataclass
class Unresolved:
    """A link the map could not follow (recorded, never silently dropped)."""

    screen: str
    element: str
    target: str
    reason: str


@dataclass(frozen=True)
class Hop:
    """One step of a route: on ``screen``, tap the element titled ``tap`` to reach ``to``.

    ``expand`` means the element sits in a collapsed section: tap "Advanced" first.
    """

    screen: str
    tap: str
    to: str
    key: str = ""
    expand: bool = False

    def __str__(self) -> str:
        return ("Advanced > " if self.expand else "") + self.tap


def normalise_label(text: str) -> str:
    """Lower case, single spaces, Unicode variants folded (``verirank_core.text``), no surrounding punctuation."""
    return fold_unicode(text).strip(".:").lower()


@dataclass
class UIMap:
    """Screens, elements and links of one app, with route finding."""

    app: str
    home: str
    screens: dict[str, MapScreen] = field(default_factory=dict)
    unresolved: list[Unresolved] = field(default_factory=list)
    #: string resources referenced but not defined: (name, where)
    missing_strings: list[tuple[str, str]] = field(default_factory=list)
    #: elements dropped because they show nothing (layout-only widgets): count per widget class
    skipped: dict[str, int] = field(default_factory=dict)
    #: links the resources leave open that now open a screen built from AOSP behaviour
    #: (``reason`` holds the source; the link's original reason is in ``target``)
    built_links: list[Unresolved] = field(default_factory=list)
    #: settings that several built screens read or write (the screen lock type): key ->
    #: {"options": [...], "initial": value, "description": source}
    choice_settings: dict[str, JSONObject] = field(default_factory=dict)

    # ------------------------------------------------------------ graph

    def links(self, screen_id: str, *, guessed: bool = True) -> list[tuple[MapElement, str]]:
        """(element, target screen) for every element of ``screen_id`` that opens a screen.

        ``guessed=False`` leaves out links found by the class-name rule.
        """
        screen = self.screens[screen_id]
        return [(el, el.target) for el in screen.elements
                if el.target and el.target in self.screens and (guessed or not el.guessed)]

    def reachable(self, start: Optional[str] = None, *, pages_only: bool = False,
                  guessed: bool = True) -> dict[str, int]:
        """Screen id -> number of taps from ``start`` (default: home), following links."""
        start = start or self.home
        depth = {start: 0}
        queue = deque([start])
        while queue:
            sid = queue.popleft()
            for _, target in self.links(sid, guessed=guessed):
                if target not in depth:
                    depth[target] = depth[sid] + 1
                    queue.append(target)
        if pages_only:
            return {k: v for k, v in depth.items() if self.screens[k].kind == "page"}
        return depth

    def parents(self, start: Optional[str] = None) -> dict[str, tuple[str, MapElement]]:
        """For each reachable screen, the (screen, element) a shortest route comes through."""
        start = start or self.home
        parent: dict[str, tuple[str, MapElement]] = {}
        seen = {start}
        queue = deque([start])
        while queue:
            sid = queue.popleft()
            for el, target in self.links(sid):
                if target not in seen:
                    seen.add(target)
                    parent[target] = (sid, el)
                    queue.append(target)
        return parent

    def route(self, start: str, goal: str) -> Optional[list[Hop]]:
        """Shortest list of taps from screen ``start`` to screen ``goal`` (None if unreachable)."""
        if start not in self.screens:
            raise KeyError(f"unknown screen {start!r}")
        if start == goal:
            return []
        parent = self.parents(start)
        if goal not in parent:
            return None
        hops: list[Hop] = []
        sid = goal
        while sid != start:
            prev, el = parent[sid]
            hops.append(Hop(screen=prev, tap=el.title or el.summary or el.key, to=sid, key=el.key,
                            expand=el.collapsed))
            sid = prev
        return hops[::-1]

    # ------------------------------------------------------------ lookup

    def find(self, label: str) -> list[tuple[str, MapElement]]:
        """Elements named ``label``: exact title matches first, then titles containing it, then keywords."""
        want = normalise_label(label)
        exact, partial, keyword = [], [], []
        for sid, screen in self.screens.items():
            for el in screen.elements:
                title = normalise_label(el.title)
                if title == want:
                    exact.append((sid, el))
                elif want and want in title:
                    partial.append((sid, el))
                elif any(want == normalise_label(k) for k in el.keywords) or \
                        (want and want in normalise_label(el.summary)):
                    keyword.append((sid, el))
        return exact or partial or keyword

    def route_to(self, label: str, start: Optional[str] = None) -> Optional[list[Hop]]:
        """Shortest route from ``start`` (default: home) to a screen that shows an element named ``label``.

        Returns the taps to make (empty when ``start`` already shows it), or
        None when no reachable screen shows such an element. The element itself
        is not tapped: the last hop lands on the screen that shows it. Routes follow
        links forward only (no back moves), as a user drilling down from ``start``.
        """
        start = start or self.home
        candidates = {sid for sid, _ in self.find(label)}
        if not candidates:
            return None
        if start in candidates:
            return []
        # the closest candidate by BFS depth from start
        depth = self.reachable(start)
        reachable = sorted((depth[s], s) for s in candidates if s in depth)
        if not reachable:
            return None
        return self.route(start, reachable[0][1])

    # ------------------------------------------------------------ export

    def counts(self) -> dict[str, int]:
        pages = [s for s in self.screens.values() if s.kind == "page"]
        return {
            "screens": len(pages),
            "dialogs": sum(1 for s in self.screens.values() if s.kind == "dialog"),
            "placeholders": sum(1 for s in self.screens.values() if s.kind == "placeholder"),
            "elements": sum(len(s.elements) for s in pages),
            "reachable_from_home": len(self.reachable(pages_only=True)),
        }

    def to_dict(self) -> JSONObject:
        return asdict(self)


# ---------------------------------------------------------------- from a world

def map_from_world(world: World) -> UIMap:
    """The UI map of a simulator world: pages, dialogs, and the elements whose taps open them.

    Only what a user sees is used (titles, texts, content descriptions, goto
    and dialog effects); goals are never read.
    """
    uimap = UIMap(app=world.app.package, home=world.launch_screen)
    for screen in world.screens:
        ms = MapScreen(id=screen.id, title=screen.title, source=world.source, kind=screen.kind)
        for i, node in enumerate(_walk(screen.nodes + screen.buttons)):
            title = node.title or node.text or node.content_desc or ""
            target = next((e.goto or e.dialog for e in node.on_click if e.goto or e.dialog), None)
            if not title and not target:
                continue
            kind = "link" if target else ("switch" if node.switch else node.kind)
            ms.elements.append(MapElement(
                key=node.id or f"n{i}", kind=kind, title=title, summary=node.summary or "",
                widget=node.kind, target=target, collapsed=node.visible_if is not None,
                enabled=node.enabled is not False))
        uimap.screens[screen.id] = ms
    return uimap


def _walk(nodes: Iterable[Node]) -> Iterator[Node]:
    for node in nodes:
        yield node
        yield from _walk(node.children)
