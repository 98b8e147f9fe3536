"""Turn a world screen plus the current state into a tree of placed UI nodes.

The result (:class:`Window`) is what a real phone would have on screen: the
nodes that are visible, with pixel bounds, uiautomator attributes, and (not
dumped) what a tap on each does. ``uixml.dump`` serialises it, ``render``
draws it, the simulator hit-tests it.

Geometry follows Material/Android conventions in dp (1 dp = density/160 px):
status bar 24 dp, toolbar 56 dp, list rows 60 dp (72 dp with a summary),
dialogs 24 dp from the screen edges. A scrollable list shows only the rows
that intersect its viewport, clipped to it, like a RecyclerView.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional, TypedDict, Unpack

from phonesim.world import Effect, LauncherApp, Node, Screen, World

__all__ = ["UINode", "Window", "Metrics", "layout_page", "layout_dialog", "layout_launcher", "layout_app_drawer",
           "layout_shade",
           "text_lines", "walk"]

Bounds = tuple[int, int, int, int]


@dataclass(eq=False, slots=True)
class UINode:
    """One node as uiautomator reports it, plus what the simulator needs to act on it."""

    cls: str
    package: str
    bounds: Bounds
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    children: list["UINode"] = field(default_factory=list)
    # --- not dumped
    #: drawing hint for the renderer ("row", "title", "summary", "switch", ...)
    role: str = ""
    #: effects of a tap / long press
    on_tap: tuple[Effect, ...] = ()
    on_long: tuple[Effect, ...] = ()
    #: the world node this was built from (EditTexts and sliders need it)
    source: Optional[Node] = None
    #: sliders: the thumb position in [0, 1] (drawn, not dumped)
    fraction: float = 0.0


class NodeAttrs(TypedDict, total=False):
    """The :class:`UINode` fields a layout helper passes on (all but cls, package and bounds)."""

    text: str
    resource_id: str
    content_desc: str
    checkable: bool
    checked: bool
    clickable: bool
    enabled: bool
    focusable: bool
    focused: bool
    scrollable: bool
    long_clickable: bool
    password: bool
    selected: bool
    children: list[UINode]
    role: str
    on_tap: tuple[Effect, ...]
    on_long: tuple[Effect, ...]
    source: Optional[Node]
    fraction: float


@dataclass
class Window:
    """One window on screen: a page, a dialog, or the launcher."""

    kind: str  # "page" | "dialog" | "launcher"
    screen_id: str
    package: str
    root: UINode
    #: the scrollable list, its viewport (top, bottom) and how far it can scroll
    list_node: Optional[UINode] = None
    viewport: tuple[int, int] = (0, 0)
    max_scroll: int = 0
    scroll: int = 0
    #: dialogs: the dialog's rectangle (a tap outside dismisses it)
    frame: Bounds = (0, 0, 0, 0)
    title: str = ""
    #: the uiautomator dump, filled in on first request (windows are cached and reused)
    xml: Optional[str] = None


def walk(node: UINode):
    """Pre-order traversal."""
    yield node
    for child in node.children:
        yield from walk(child)


class Metrics:
    """Pixel sizes of one device (dp and sp converted once)."""

    def __init__(self, world: World):
        dev = world.device
        self.scale = dev.density / 160.0
        self.width = dev.width
        self.height = dev.height
        self.status_bar = self.dp(24)
        self.nav_bar = self.dp(48) if dev.navigation == "buttons" else self.dp(24)
        self.toolbar = self.dp(56)
        self.title_px = self.dp(18)
        self.summary_px = self.dp(14)

    def dp(self, value: float) -> int:
        return int(round(value * self.scale))


def text_lines(text: Optional[str], width_px: int, font_px: int, max_lines: int = 6) -> int:
    """Estimated number of wrapped lines (average glyph ~ 0.52 em wide)."""
    if not text:
        return 0
    per_line = max(1, int(width_px / (font_px * 0.52)))
    lines = sum(max(1, -(-len(part) // per_line)) for part in text.split("\n"))
    return min(lines, max_lines)


# ------------------------------------------------------------------ builders

class _Builder:
    """Expands world nodes into UINodes for one screen and one state."""

    def __init__(self, world: World, m: Metrics, state: dict, package: str,
                 focus: Optional[str], in_dialog: bool):
        self.world = world
        self.m = m
        self.state = state
        self.package = package
        self.focus = focus
        self.in_dialog = in_dialog
        self.style = world.style

    def ui(self, cls: str, bounds: Bounds, **attrs: Unpack[NodeAttrs]) -> UINode:
        return UINode(cls=cls, package=self.package, bounds=bounds, **attrs)

    def rid(self, template: str) -> str:
        return template.replace("{package}", self.package)

    # -- entry point

    def build(self, node: Node, x: int, y: int, w: int) -> UINode:
        """Place ``node`` with its top-left at (x, y) and width ``w``."""
        builder: Callable = getattr(self, f"_{node.kind}")
        if node.bounds is not None:
            x, y, x2, _ = node.bounds
            w = x2 - x
        out = builder(node, x, y, w)
        if node.bounds is not None:
            out.bounds = tuple(node.bounds)  # type: ignore[assignment]
        self.apply_overrides(out, node)
        return out

    def visible(self, nodes: list[Node]) -> list[Node]:
        return [n for n in nodes if n.is_visible(self.state)]

    def apply_overrides(self, out: UINode, node: Node) -> None:
        """Raw attributes written in the world win over what the widget produced."""
        text = node.render("text", self.state)
        if node.cls is not None:
            out.cls = node.cls
        if text is not None and node.kind not in ("row", "button", "edit", "radio", "checkbox", "tab", "header", "text"):
            out.text = text
        if node.resource_id is not None:
            out.resource_id = self.rid(node.resource_id)
        desc = node.render("content_desc", self.state)
        if desc is not None:
            out.content_desc = desc
        for attr in ("checkable", "clickable", "scrollable", "focusable", "password", "selected",
                     "long_clickable"):
            value = getattr(node, attr)
            if value is not None:
                setattr(out, attr, value)
        if isinstance(node.checked, bool):
            out.checked = node.checked
        elif isinstance(node.checked, str):
            out.checked = bool(self.state[node.checked])
            out.checkable = True
        if node.on_click and node.kind not in ("radio", "choices"):
            out.on_tap = tuple(node.on_click)
            if node.clickable is None:
                out.clickable = out.focusable = True
        if node.on_long_press:
            out.on_long = tuple(node.on_long_press)
            if node.long_clickable is None:
                out.long_clickable = True
        if not node.is_enabled(self.state):
            for sub in walk(out):
                sub.enabled = False

    def stack(self, nodes: list[Node], x: int, y: int, w: int) -> tuple[list[UINode], int]:
        """Lay ``nodes`` out top to bottom; returns the nodes and the bottom y."""
        out = []
        for node in self.visible(nodes):
            placed = self.build(node, x, y, w)
            out.append(placed)
            if node.bounds is None:
                y = placed.bounds[3]
        return out, y

    def height(self, node: Node, default_dp: float) -> int:
        return self.m.dp(node.height if node.height else default_dp)

    # -- containers

    def _group(self, node: Node, x: int, y: int, w: int) -> UINode:
        children, bottom = self.stack(node.children, x, y, w)
        if node.height:
            bottom = y + self.m.dp(node.height)
        return self.ui("android.widget.LinearLayout", (x, y, x + w, bottom), children=children, role="group")

    def _view(self, node: Node, x: int, y: int, w: int) -> UINode:
        if node.children:
            out = self._group(node, x, y, w)
            out.cls = "android.view.ViewGroup"
            out.role = "view"
            return out
        h = self.height(node, 48)
        return self.ui("android.view.View", (x, y, x + w, y + h), role="view")

    def _bar(self, node: Node, x: int, y: int, w: int) -> UINode:
        """Children side by side in equal widths (tabs, bottom navigation, button rows)."""
        items = self.visible(node.children)
        h = self.height(node, 56)
        children = []
        n = max(1, len(items))
        for i, child in enumerate(items):
            cx1 = x + w * i // n
            cx2 = x + w * (i + 1) // n
            placed = self.build(child, cx1, y, cx2 - cx1)
            b = placed.bounds
            if child.bounds is None and placed.children:
                # a container cell fills the bar's height, its content centred
                placed.bounds = (b[0], y, b[2], y + h)
                _center_children(placed, y, y + h)
            elif child.bounds is None:
                # a single widget keeps its own height, centred in the bar
                _shift(placed, y + (h - (b[3] - b[1])) // 2 - b[1])
            children.append(placed)
        return self.ui("android.widget.LinearLayout", (x, y, x + w, y + h), children=children, role="bar")

    # -- preference-like rows

    def _row(self, node: Node, x: int, y: int, w: int, widget: Optional[str] = None,
             widget_left: bool = False) -> UINode:
        m = self.m
        st = self.state
        title = node.render("title", st) or node.render("text", st) or ""
        summary = node.render("summary", st)
        if widget is None and node.switch is not None:
            widget = "switch"
        has_icon = bool(node.icon)
        left = x + (m.dp(72) if has_icon or widget_left else m.dp(16))
        right = x + w - (m.dp(80) if widget and not widget_left else m.dp(16))
        n_summary = text_lines(summary, right - left, m.summary_px, max_lines=4)
        h = self._row_height(node, summary, w, bool(widget), widget_left)
        y2 = y + h
        row = self.ui("android.widget.LinearLayout", (x, y, x + w, y2), clickable=True, focusable=True,
                      role="row", source=node)
        block = m.dp(26) + (m.dp(20) * n_summary if summary else 0)
        ty = y + max(0, (h - block) // 2)
        if has_icon:
            icon_frame = self.ui("android.widget.LinearLayout", (x, y, x + m.dp(72), y2),
                                 resource_id="android:id/icon_frame", role="icon_frame")
            cy = (y + y2) // 2
            icon = self.ui("android.widget.ImageView", (x + m.dp(20), cy - m.dp(12), x + m.dp(44), cy + m.dp(12)),
                           resource_id="android:id/icon", role="icon",
                           content_desc=node.icon if isinstance(node.icon, str) else "")
            icon_frame.children.append(icon)
            row.children.append(icon_frame)
        texts = self.ui("android.widget.RelativeLayout", (left, ty, right, ty + block), role="texts")
        texts.children.append(self.ui("android.widget.TextView", (left, ty, right, ty + m.dp(26)), text=title,
                                      resource_id="android:id/title", role="title"))
        if summary:
            texts.children.append(self.ui("android.widget.TextView", (left, ty + m.dp(26), right, ty + block),
                                          text=summary, resource_id="android:id/summary", role="summary"))
        if widget:
            wx1, wx2 = (x, x + m.dp(72)) if widget_left else (x + w - m.dp(80), x + w - m.dp(16))
            frame = self.ui("android.widget.LinearLayout", (wx1, y, wx2, y2), resource_id="android:id/widget_frame",
                            role="widget_frame")
            frame.children.append(self.widget(node, widget, wx1, wx2, (y + y2) // 2))
            if widget_left:
                row.children.append(frame)
                row.children.append(texts)
            else:
                row.children.append(texts)
                row.children.append(frame)
        else:
            row.children.append(texts)
        # what a tap does: on_click (set by apply_overrides) or toggling the switch
        if widget == "switch" and not node.on_click:
            row.on_tap = (Effect(toggle=node.switch),)
        elif widget == "switch" and node.split:
            # two targets: the text opens a page, the switch toggles
            sw = frame.children[0]
            sw.clickable = sw.focusable = True
            sw.on_tap = (Effect(toggle=node.switch),)
        return row

    def _row_height(self, node: Node, summary: Optional[str], w: int, widget: bool, widget_left: bool) -> int:
        m = self.m
        text_w = w - (m.dp(72) if node.icon or widget_left else m.dp(16)) - \
            (m.dp(80) if widget and not widget_left else m.dp(16))
        n_summary = text_lines(summary, text_w, m.summary_px, max_lines=4)
        return self.height(node, (72 if summary else 60) + 20 * max(0, n_summary - 1))

    def measure(self, node: Node, w: int) -> Optional[int]:
        """How far a vertical list advances past ``node``, without building it (None: build to know).

        Lets a long list skip building the rows that are scrolled out of view.
        """
        if node.bounds is not None:
            return None
        kind = node.kind
        if kind in ("row", "checkbox"):
            summary = node.render("summary", self.state)
            widget = kind == "checkbox" or node.switch is not None
            return self._row_height(node, summary, w, widget, False)
        if kind == "header":
            return self.height(node, 48)
        if kind == "text":
            text = node.render("text", self.state) or node.render("title", self.state) or ""
            return self.height(node, 16 + 20 * max(1, text_lines(text, w - self.m.dp(32), self.m.summary_px, 8)))
        if kind == "card":
            return w * 9 // 16 + self.m.dp(88)
        if kind in ("button", "edit"):
            # these are inset 4 dp inside their slot; the list advances to their bottom edge
            return self.height(node, 56) - self.m.dp(4)
        if kind == "image":
            return self.height(node, 160)
        return None

    def widget(self, node: Node, widget: str, x1: int, x2: int, cy: int) -> UINode:
        m = self.m
        if widget == "switch":
            on = bool(self.state[node.switch])
            text = ("ON" if on else "OFF") if self.style.switch_text else ""
            return self.ui("android.widget.Switch", (x1 + m.dp(8), cy - m.dp(24), x2, cy + m.dp(24)),
                           resource_id=self.rid(self.style.switch_id), checkable=True, checked=on, text=text,
                           role="switch")
        if widget == "checkbox":
            on = bool(self.state[node.var])
            return self.ui("android.widget.CheckBox", (x1 + m.dp(16), cy - m.dp(24), x2 - m.dp(8), cy + m.dp(24)),
                           resource_id="android:id/checkbox", checkable=True, checked=on, role="checkbox")
        # radio
        on = self.state[node.var] == node.value
        return self.ui("android.widget.RadioButton", (x1 + m.dp(16), cy - m.dp(24), x2 - m.dp(8), cy + m.dp(24)),
                       resource_id="android:id/checkbox", checkable=True, checked=on, role="radio")

    def _checkbox(self, node: Node, x: int, y: int, w: int) -> UINode:
        row = self._row(node, x, y, w, widget="checkbox")
        if not node.on_click:
            row.on_tap = (Effect(toggle=node.var),)
        return row

    def _radio(self, node: Node, x: int, y: int, w: int) -> UINode:
        label = node.render("title", self.state) or node.render("text", self.state) or str(node.value)
        select = (Effect(set={node.var: node.value}),) + tuple(node.on_click)
        if self.in_dialog and not node.on_click:
            # a single-choice dialog closes as soon as an item is picked
            select = select + (Effect(dismiss=True),)
        if self.in_dialog:
            h = self.height(node, 56)
            return self.ui("android.widget.CheckedTextView", (x, y, x + w, y + h), text=label,
                           resource_id="android:id/text1", checkable=True,
                           checked=self.state[node.var] == node.value, clickable=True, focusable=True,
                           role="dialog_radio", on_tap=select, source=node)
        if w < self.m.dp(240):
            # a RadioButton in a RadioGroup row (e.g. Louder / Normal / Softer)
            h = self.height(node, 56)
            return self.ui("android.widget.RadioButton", (x, y, x + w, y + h), text=label, checkable=True,
                           checked=self.state[node.var] == node.value, clickable=True, focusable=True,
                           role="compact_radio", on_tap=select, source=node)
        shown = node.model_copy(update={"title": label})
        shown._tpl = {k: v for k, v in node._tpl.items() if k != "title"}
        row = self._row(shown, x, y, w, widget="radio", widget_left=True)
        row.on_tap = select
        return row

    def _choices(self, node: Node, x: int, y: int, w: int) -> UINode:
        """One radio per option of a choice variable."""
        spec = self.world.state[node.var]
        items = []
        bottom = y
        for option in spec.options:
            radio = Node(kind="radio", var=node.var, value=option, title=option, height=node.height,
                         on_click=node.on_click)
            placed = self._radio(radio, x, bottom, w)
            items.append(placed)
            bottom = placed.bounds[3]
        return self.ui("android.widget.LinearLayout", (x, y, x + w, bottom), children=items, role="group")

    def _header(self, node: Node, x: int, y: int, w: int) -> UINode:
        m = self.m
        h = self.height(node, 48)
        title = node.render("title", self.state) or node.render("text", self.state) or ""
        box = self.ui("android.widget.LinearLayout", (x, y, x + w, y + h), role="header_box")
        box.children.append(self.ui("android.widget.TextView", (x + m.dp(16), y + m.dp(16), x + w - m.dp(16), y + h - m.dp(4)),
                                    text=title, resource_id="android:id/title", role="header"))
        return box

    def _text(self, node: Node, x: int, y: int, w: int) -> UINode:
        m = self.m
        text = node.render("text", self.state) or node.render("title", self.state) or ""
        lines = text_lines(text, w - m.dp(32), m.summary_px, max_lines=8)
        h = self.height(node, 16 + 20 * max(1, lines))
        return self.ui("android.widget.TextView", (x + m.dp(16), y, x + w - m.dp(16), y + h), text=text,
                       role="text")

    def _edit(self, node: Node, x: int, y: int, w: int) -> UINode:
        m = self.m
        h = self.height(node, 56)
        value = self.state[node.on_input]
        hint = node.render("hint", self.state) or ""
        shown = ("\u2022" * len(value) if node.password else value) if value else hint
        return self.ui("android.widget.EditText", (x + m.dp(16), y + m.dp(4), x + w - m.dp(16), y + h - m.dp(4)),
                       text=shown, clickable=True, focusable=True, long_clickable=True,
                       focused=self.focus == node._path, password=bool(node.password),
                       role="edit" if value else "edit_hint", source=node)

    def _button(self, node: Node, x: int, y: int, w: int) -> UINode:
        m = self.m
        h = self.height(node, 56)
        text = node.render("text", self.state) or node.render("title", self.state) or ""
        inset = m.dp(16) if w >= m.dp(160) else m.dp(4)
        return self.ui("android.widget.Button", (x + inset, y + m.dp(4), x + w - inset, y + h - m.dp(4)),
                       text=text, clickable=True, focusable=True, role="button")

    def _icon_button(self, node: Node, x: int, y: int, w: int) -> UINode:
        h = self.height(node, 56)
        size = min(w, h)
        cx = x + w // 2
        return self.ui("android.widget.ImageButton", (cx - size // 2, y, cx + size // 2, y + h),
                       clickable=True, focusable=True, role="icon_button",
                       content_desc=node.render("content_desc", self.state) or "")

    def _image(self, node: Node, x: int, y: int, w: int) -> UINode:
        h = self.height(node, 160)
        return self.ui("android.widget.ImageView", (x, y, x + w, y + h), role="image")

    def _slider(self, node: Node, x: int, y: int, w: int) -> UINode:
        """Title, then [-] SeekBar [+]; a tap on the bar picks the value under the finger."""
        m = self.m
        st = self.state
        title = node.render("title", st) or ""
        h = self.height(node, 112)
        box = self.ui("android.widget.LinearLayout", (x, y, x + w, y + h), role="slider_box")
        box.children.append(self.ui("android.widget.TextView", (x + m.dp(16), y + m.dp(12), x + w - m.dp(16), y + m.dp(40)),
                                    text=title, resource_id="android:id/title", role="title"))
        current = st[node.var]
        spec = self.world.state[node.var]
        if spec.type == "choice":
            fraction = spec.options.index(current) / max(1, len(spec.options) - 1)
        else:
            fraction = (current - spec.min) / max(1, spec.max - spec.min)
        box.children.append(self.ui("android.widget.TextView", (x + m.dp(16), y + m.dp(40), x + w - m.dp(16), y + m.dp(62)),
                                    text=str(current), resource_id="android:id/summary", role="summary"))
        by = y + m.dp(62)
        box.children.append(self.ui("android.widget.ImageView", (x + m.dp(8), by, x + m.dp(56), by + m.dp(48)),
                                    resource_id="android:id/icon_start", content_desc="Decrease", clickable=True,
                                    focusable=True, role="minus", on_tap=(Effect(dec=node.var),)))
        box.children.append(self.ui("android.widget.SeekBar", (x + m.dp(56), by, x + w - m.dp(56), by + m.dp(48)),
                                    resource_id="android:id/seekbar", content_desc=title, clickable=True,
                                    focusable=True, role="seekbar", source=node, fraction=fraction))
        box.children.append(self.ui("android.widget.ImageView", (x + w - m.dp(56), by, x + w - m.dp(8), by + m.dp(48)),
                                    resource_id="android:id/icon_end", content_desc="Increase", clickable=True,
                                    focusable=True, role="plus", on_tap=(Effect(inc=node.var),)))
        return box

    def _card(self, node: Node, x: int, y: int, w: int) -> UINode:
        """A feed item: 16:9 thumbnail, title, and a subtitle line (channel, views)."""
        m = self.m
        st = self.state
        title = node.render("title", st) or ""
        subtitle = node.render("subtitle", st) or node.render("summary", st) or ""
        thumb_h = w * 9 // 16
        h = thumb_h + self.m.dp(88)
        card = self.ui("android.view.ViewGroup", (x, y, x + w, y + h), clickable=True, focusable=True,
                       content_desc=f"{title} - {subtitle}" if subtitle else title, role="card")
        card.children.append(self.ui("android.widget.ImageView", (x, y, x + w, y + thumb_h),
                                     resource_id=self.rid("{package}:id/thumbnail"), role="image"))
        ty = y + thumb_h + m.dp(12)
        card.children.append(self.ui("android.widget.TextView", (x + m.dp(60), ty, x + w - m.dp(16), ty + m.dp(26)),
                                     text=title, resource_id=self.rid("{package}:id/title"), role="title"))
        card.children.append(self.ui("android.widget.TextView", (x + m.dp(60), ty + m.dp(28), x + w - m.dp(16), ty + m.dp(48)),
                                     text=subtitle, resource_id=self.rid("{package}:id/details"), role="summary"))
        return card

    def _tab(self, node: Node, x: int, y: int, w: int) -> UINode:
        """A bottom-navigation / tab item: icon over a label."""
        m = self.m
        h = self.height(node, 56)
        text = node.render("text", self.state) or node.render("title", self.state) or ""
        tab = self.ui("android.widget.FrameLayout", (x, y, x + w, y + h), clickable=True, focusable=True,
                      content_desc=text, role="tab")
        cx = x + w // 2
        tab.children.append(self.ui("android.widget.ImageView", (cx - m.dp(12), y + m.dp(6), cx + m.dp(12), y + m.dp(30)),
                                    role="tab_icon"))
        tab.children.append(self.ui("android.widget.TextView", (x + m.dp(4), y + m.dp(32), x + w - m.dp(4), y + m.dp(52)),
                                    text=text, role="tab_label"))
        return tab


def _center_children(node: UINode, top: int, bottom: int) -> None:
    """Shift a cell's subtree so that it is vertically centred in [top, bottom)."""
    if not node.children:
        return
    lo = min(n.bounds[1] for n in node.children)
    hi = max(n.bounds[3] for n in node.children)
    dy = top + (bottom - top - (hi - lo)) // 2 - lo
    if dy == 0:
        return
    for child in node.children:
        for sub in walk(child):
            b = sub.bounds
            sub.bounds = (b[0], b[1] + dy, b[2], b[3] + dy)


def _clip(node: UINode, top: int, bottom: int) -> Optional[UINode]:
    """Drop what lies outside [top, bottom) and clip the rest, like uiautomator's visible bounds."""
    x1, y1, x2, y2 = node.bounds
    if y2 <= top or y1 >= bottom or y2 <= y1:
        return None
    node.bounds = (x1, max(y1, top), x2, min(y2, bottom))
    node.children = [c for c in (_clip(ch, top, bottom) for ch in node.children) if c is not None]
    return node


def _shift(node: UINode, dy: int) -> None:
    for sub in walk(node):
        b = sub.bounds
        sub.bounds = (b[0], b[1] + dy, b[2], b[3] + dy)


# --------------------------------------------------------------- windows

def _decor(package: str, m: Metrics, content: UINode, system_bars: bool = True) -> UINode:
    """The frame every app window has around its content (DecorView, status/navigation bar views)."""
    W, H = m.width, m.height
    full = (0, 0, W, H)
    inner = UINode("android.widget.FrameLayout", package, full, children=[content])
    linear = UINode("android.widget.LinearLayout", package, full, children=[inner])
    root = UINode("android.widget.FrameLayout", package, full, children=[linear], role="window")
    if system_bars:
        root.children.append(UINode("android.view.View", package, (0, 0, W, m.status_bar),
                                    resource_id="android:id/statusBarBackground", role="status_bar"))
        root.children.append(UINode("android.view.View", package, (0, H - m.nav_bar, W, H),
                                    resource_id="android:id/navigationBarBackground", role="nav_bar"))
    return root


def layout_page(world: World, screen: Screen, state: dict, scroll: int = 0,
                focus: Optional[str] = None, metrics: Optional[Metrics] = None) -> Window:
    """A full-screen page: toolbar, docked nodes, and the scrolling list."""
    m = metrics or Metrics(world)
    package = screen.package or world.app.package
    b = _Builder(world, m, state, package, focus, in_dialog=False)
    W = m.width
    top = m.status_bar
    bottom = m.height - m.nav_bar
    body: list[UINode] = []
    title = screen._title_tpl.render(state) if screen._title_tpl else screen.title
    if screen.toolbar:
        bar = b.ui("android.view.ViewGroup", (0, top, W, top + m.toolbar), resource_id=b.rid(world.style.toolbar_id),
                   role="toolbar")
        text_left = m.dp(16)
        if screen.back_arrow:
            bar.children.append(b.ui("android.widget.ImageButton", (0, top, m.dp(56), top + m.toolbar),
                                     content_desc="Navigate up", clickable=True, focusable=True, role="up",
                                     on_tap=(Effect(back=True),)))
            text_left = m.dp(72)
        bar.children.append(b.ui("android.widget.TextView", (text_left, top + m.dp(14), W - m.dp(16), top + m.dp(42)),
                                 text=title, role="toolbar_title"))
        body.append(bar)
        top += m.toolbar
    visible = b.visible(screen.nodes)
    for node in [n for n in visible if n.dock == "top"]:
        placed = b.build(node, 0, top, W)
        body.append(placed)
        top = placed.bounds[3] if node.bounds is None else top
    docked_bottom = []
    for node in reversed([n for n in visible if n.dock == "bottom"]):
        # build once to learn the height, then move into place
        placed = b.build(node, 0, 0, W)
        if node.bounds is None:
            _shift(placed, bottom - placed.bounds[3])
            bottom = placed.bounds[1]
        docked_bottom.insert(0, placed)
    fixed = [n for n in visible if n.dock is None and n.bounds is not None]
    flowing = [n for n in visible if n.dock is None and n.bounds is None]
    window = Window(kind="page", screen_id=screen.id, package=package, root=None, title=title)  # type: ignore[arg-type]
    if flowing:
        # measure first: rows scrolled out of view are never built (RecyclerView recycles them too)
        heights = [b.measure(n, W) for n in flowing]
        if any(h is None for h in heights):
            items, content_bottom = b.stack(flowing, 0, top, W)
            placed_items = [(it, 0) for it in items]
        else:
            content_bottom = top + sum(heights)  # type: ignore[arg-type]
            placed_items = []
        content_h = content_bottom - top
        viewport_h = bottom - top
        max_scroll = max(0, content_h - viewport_h)
        offset = min(max(0, scroll), max_scroll)
        if not placed_items:
            y = top - offset
            for node, h in zip(flowing, heights):
                if y + h > top and y < bottom:
                    placed_items.append((b.build(node, 0, y, W), 0))
                y += h  # type: ignore[operator]
        else:
            for item, _ in placed_items:
                _shift(item, -offset)
        shown = [c for c in (_clip(it, top, bottom) for it, _ in placed_items) if c is not None]
        lst = b.ui(world.style.list_class, (0, top, W, bottom), resource_id=b.rid(world.style.list_id),
                   scrollable=max_scroll > 0, focusable=max_scroll > 0, children=shown, role="list")
        body.append(lst)
        window.list_node, window.viewport, window.max_scroll, window.scroll = lst, (top, bottom), max_scroll, offset
    body.extend(b.build(n, 0, top, W) for n in fixed)
    body.extend(docked_bottom)
    content = b.ui("android.widget.LinearLayout", (0, m.status_bar, W, m.height - m.nav_bar), children=body,
                   resource_id="android:id/content", role="content")
    window.root = _decor(package, m, content)
    return window


def layout_dialog(world: World, screen: Screen, state: dict, scroll: int = 0,
                  focus: Optional[str] = None, metrics: Optional[Metrics] = None,
                  package: Optional[str] = None) -> Window:
    """An AlertDialog: title, message, items (scrolling when long), button bar."""
    m = metrics or Metrics(world)
    package = package or screen.package or world.app.package
    b = _Builder(world, m, state, package, focus, in_dialog=True)
    x1, x2 = m.dp(24), m.width - m.dp(24)
    w = x2 - x1
    parts: list[UINode] = []
    y = 0  # laid out from 0, moved to the centre at the end
    title = screen._title_tpl.render(state) if screen._title_tpl else screen.title
    if title:
        top = b.ui("android.widget.LinearLayout", (x1, y, x2, y + m.dp(64)), resource_id="android:id/topPanel")
        top.children.append(b.ui("android.widget.TextView", (x1 + m.dp(24), y + m.dp(20), x2 - m.dp(24), y + m.dp(52)),
                                 text=title, resource_id="android:id/alertTitle", role="dialog_title"))
        parts.append(top)
        y += m.dp(64)
    if screen.message is not None:
        message = screen._message_tpl.render(state) if screen._message_tpl else screen.message
        lines = text_lines(message, w - m.dp(48), m.summary_px + m.dp(1), max_lines=10)
        h = m.dp(20 + 22 * lines)
        panel = b.ui("android.widget.FrameLayout", (x1, y, x2, y + h), resource_id="android:id/contentPanel")
        panel.children.append(b.ui("android.widget.TextView", (x1 + m.dp(24), y + m.dp(4), x2 - m.dp(24), y + h - m.dp(12)),
                                   text=message, resource_id="android:id/message", role="message"))
        parts.append(panel)
        y += h
    items, items_bottom = b.stack(screen.nodes, x1, y, w)
    buttons = b.visible(screen.buttons)
    button_h = m.dp(52) if buttons else m.dp(8)
    max_h = m.height - 2 * m.dp(64)
    list_top = y
    list_h = items_bottom - list_top
    avail = max_h - (list_top + button_h)
    viewport_h = min(list_h, max(avail, m.dp(56)))
    max_scroll = max(0, list_h - viewport_h)
    offset = min(max(0, scroll), max_scroll)
    window = Window(kind="dialog", screen_id=screen.id, package=package, root=None, title=title)  # type: ignore[arg-type]
    if items:
        for item in items:
            _shift(item, -offset)
        shown = [c for c in (_clip(it, list_top, list_top + viewport_h) for it in items) if c is not None]
        is_choice = any(n.role == "dialog_radio" for it in shown for n in walk(it))
        lst = b.ui("android.widget.ListView" if is_choice else "android.widget.LinearLayout",
                   (x1, list_top, x2, list_top + viewport_h),
                   resource_id="android:id/select_dialog_listview" if is_choice else "android:id/custom",
                   scrollable=max_scroll > 0, focusable=max_scroll > 0, children=shown, role="list")
        parts.append(lst)
        window.list_node, window.viewport, window.max_scroll, window.scroll = lst, (list_top, list_top + viewport_h), max_scroll, offset
        y = list_top + viewport_h
    if buttons:
        panel = b.ui("android.widget.LinearLayout", (x1, y, x2, y + button_h), resource_id="android:id/buttonPanel")
        right = x2 - m.dp(16)
        ids = {1: ["android:id/button1"], 2: ["android:id/button2", "android:id/button1"],
               3: ["android:id/button3", "android:id/button2", "android:id/button1"]}.get(len(buttons))
        placed_buttons = []
        for i, node in enumerate(reversed(buttons)):
            text = node.render("text", state) or node.render("title", state) or ""
            bw = max(m.dp(64), len(text) * m.dp(9) + m.dp(24))
            btn = b.ui("android.widget.Button", (right - bw, y + m.dp(4), right, y + button_h - m.dp(4)), text=text,
                       clickable=True, focusable=True, role="dialog_button",
                       resource_id=ids[len(buttons) - 1 - i] if ids else "")
            b.apply_overrides(btn, node)
            if not btn.on_tap:
                btn.on_tap = (Effect(dismiss=True),)
            placed_buttons.insert(0, btn)
            right -= bw + m.dp(8)
        panel.children = placed_buttons
        parts.append(panel)
        y += button_h
    else:
        y += button_h
    total = y
    dy = (m.height - total) // 2
    parent_panel = b.ui("android.widget.LinearLayout", (x1, 0, x2, total), resource_id="android:id/parentPanel",
                        children=parts)
    _shift(parent_panel, dy)
    if window.list_node is not None:
        window.viewport = (window.viewport[0] + dy, window.viewport[1] + dy)
    frame = (x1, dy, x2, dy + total)
    content = b.ui("android.widget.FrameLayout", frame, resource_id="android:id/content", children=[parent_panel])
    window.root = b.ui("android.widget.FrameLayout", frame, children=[content], role="dialog")
    window.frame = frame
    return window


def _icon_grid(pkg: str, m: Metrics, apps: list[LauncherApp], top: int) -> tuple[list[UINode], int]:
    """App icons 4 per row from ``top``: each a labelled TextView that launches its app."""
    margin = m.dp(22)
    cell_w = (m.width - 2 * margin) // 4
    cell_h = m.dp(104)
    icons = []
    for i, app in enumerate(apps):
        r, c = divmod(i, 4)
        x = margin + c * cell_w
        y = top + r * (cell_h + m.dp(16))
        icons.append(UINode(cls="android.widget.TextView", package=pkg,
                            bounds=(x + m.dp(8), y, x + cell_w - m.dp(8), y + cell_h),
                            text=app.label, content_desc=app.label, clickable=True, focusable=True,
                            long_clickable=True, role="app_icon", on_tap=(Effect(launch=app.package),)))
    return icons, top + ((len(apps) + 3) // 4) * (cell_h + m.dp(16))


def layout_launcher(world: World, apps: list[LauncherApp], metrics: Optional[Metrics] = None) -> Window:
    """The home screen: a grid of app icons (4 per row) and a search bar, like the Pixel launcher."""
    m = metrics or Metrics(world)
    pkg = world.device.launcher_package
    W, H = m.width, m.height
    full = (0, 0, W, H)

    def ui(cls: str, bounds: Bounds, **attrs: Unpack[NodeAttrs]) -> UINode:
        return UINode(cls=cls, package=pkg, bounds=bounds, **attrs)

    margin = m.dp(22)
    top = m.status_bar + m.dp(40)
    icons, grid_bottom = _icon_grid(pkg, m, apps, top)
    grid = ui("android.view.ViewGroup", (margin, top, W - margin, grid_bottom), children=icons)
    workspace = ui("android.widget.ScrollView", full, resource_id=f"{pkg}:id/workspace",
                   children=[ui("android.view.ViewGroup", (margin, top, W - margin, grid_bottom), children=[grid])])
    sb_y = H - m.nav_bar - m.dp(84)
    search = ui("android.widget.FrameLayout", (m.dp(32), sb_y, W - m.dp(32), sb_y + m.dp(60)), content_desc="Search",
                clickable=True, focusable=True, role="search_pill")
    hotseat = ui("android.view.ViewGroup", (0, sb_y - m.dp(16), W, H), resource_id=f"{pkg}:id/hotseat",
                 children=[search])
    drag = ui("android.widget.FrameLayout", full, resource_id=f"{pkg}:id/drag_layer",
              children=[ui("android.view.View", full, resource_id=f"{pkg}:id/scrim_view"), workspace,
                        ui("android.view.View", (0, m.status_bar, W, H), content_desc="Home"), hotseat])
    launcher = ui("android.widget.FrameLayout", full, resource_id=f"{pkg}:id/launcher", children=[drag])
    content = ui("android.widget.FrameLayout", full, resource_id="android:id/content", children=[launcher])
    root = ui("android.widget.FrameLayout", full,
              children=[ui("android.widget.LinearLayout", full, children=[content])], role="launcher")
    return Window(kind="launcher", screen_id="launcher", package=pkg, root=root, title="Home")


def layout_app_drawer(world: World, apps: list[LauncherApp], metrics: Optional[Metrics] = None) -> Window:
    """The app drawer a swipe up on the home screen opens: every app, A to Z, under a search box."""
    m = metrics or Metrics(world)
    pkg = world.device.launcher_package
    W, H = m.width, m.height
    full = (0, 0, W, H)

    def ui(cls: str, bounds: Bounds, **attrs: Unpack[NodeAttrs]) -> UINode:
        return UINode(cls=cls, package=pkg, bounds=bounds, **attrs)

    top = m.status_bar + m.dp(8)
    search = ui("android.widget.EditText", (m.dp(16), top, W - m.dp(16), top + m.dp(48)), text="Search apps",
                resource_id=f"{pkg}:id/search_box_input", focusable=True, role="search_pill")
    ordered = sorted(apps, key=lambda a: a.label.lower())
    icons, bottom = _icon_grid(pkg, m, ordered, top + m.dp(64))
    grid = ui("androidx.recyclerview.widget.RecyclerView", (0, top + m.dp(64), W, min(bottom, H - m.nav_bar)),
              resource_id=f"{pkg}:id/apps_list_view", children=icons)
    apps_view = ui("android.widget.FrameLayout", full, resource_id=f"{pkg}:id/apps_view", children=[search, grid])
    content = ui("android.widget.FrameLayout", full, resource_id="android:id/content", children=[apps_view])
    root = ui("android.widget.FrameLayout", full,
              children=[ui("android.widget.LinearLayout", full, children=[content])], role="launcher")
    return Window(kind="launcher", screen_id="app_drawer", package=pkg, root=root, title="Apps")


#: the system UI package that owns the notification shade
SYSTEMUI = "com.android.systemui"


def layout_shade(world: World, metrics: Optional[Metrics] = None, settings_package: Optional[str] = None,
                 state: Optional[dict] = None) -> Window:
    """The panel a swipe down from the status bar opens: a header with the clock and the gear that
    opens Settings (as on Pixel and OxygenOS), the quick settings tiles of ``device.quick_settings``
    (each a Switch showing its variable in ``state``), and no notifications."""
    m = metrics or Metrics(world)
    W, H = m.width, m.height

    def ui(cls: str, bounds: Bounds, **attrs: Unpack[NodeAttrs]) -> UINode:
        return UINode(cls=cls, package=SYSTEMUI, bounds=bounds, **attrs)

    top = m.status_bar
    row = m.dp(56)
    clock = ui("android.widget.TextView", (m.dp(16), top, m.dp(120), top + row), text="12:00",
               resource_id=f"{SYSTEMUI}:id/clock")
    g = m.dp(48)
    gear_effects = (Effect(launch=settings_package),) if settings_package else ()
    gear = ui("android.widget.ImageView", (W - m.dp(16) - g, top + (row - g) // 2, W - m.dp(16), top + (row + g) // 2),
              content_desc="Settings", resource_id=f"{SYSTEMUI}:id/settings_button", clickable=True,
              focusable=True, role="shade_settings", on_tap=gear_effects)
    y = top + row
    children = [clock, gear]
    tiles = world.device.quick_settings
    if tiles:
        cell_w, cell_h = W // 4, m.dp(88)
        views = []
        for i, tile in enumerate(tiles):
            r, c = divmod(i, 4)
            x1, y1 = c * cell_w, y + r * cell_h
            on = bool((state or {}).get(tile.var))
            long_press: tuple[Effect, ...] = ()
            if tile.screen and settings_package:
                long_press = (Effect(launch=settings_package), Effect(goto=tile.screen))
            label = ui("android.widget.TextView", (x1 + m.dp(4), y1 + m.dp(60), x1 + cell_w - m.dp(4), y1 + m.dp(80)),
                       text=tile.label, resource_id=f"{SYSTEMUI}:id/tile_label", role="qs_label")
            views.append(ui("android.widget.Switch", (x1, y1, x1 + cell_w, y1 + cell_h), content_desc=tile.label,
                            checkable=True, checked=on, clickable=True, long_clickable=True, focusable=True,
                            role="qs_tile", on_tap=(Effect(toggle=tile.var),), on_long=long_press,
                            children=[label]))
        rows = (len(tiles) + 3) // 4
        panel_bottom = y + rows * cell_h
        children.append(ui("android.view.ViewGroup", (0, y, W, panel_bottom), resource_id=f"{SYSTEMUI}:id/quick_settings_panel",
                           children=views))
        y = panel_bottom
    children.append(ui("android.widget.TextView", (m.dp(16), y, W - m.dp(16), y + m.dp(64)), text="No notifications",
                       resource_id=f"{SYSTEMUI}:id/no_notifications", role="text"))
    panel = ui("android.widget.FrameLayout", (0, 0, W, H), resource_id=f"{SYSTEMUI}:id/notification_panel",
               children=children)
    root = ui("android.widget.FrameLayout", (0, 0, W, H), children=[panel], role="shade")
    return Window(kind="shade", screen_id="shade", package=SYSTEMUI, root=root, title="Notifications")
