"""Control distillation: from a full uiautomator tree to the few controls a person could use.

A dump of a settings screen has ~100 nodes, most of them layout containers.
Following the MagicWand paper, we keep only *visible, actionable* regions and
give each one a *description*:

1. **Visible**: positive area, at least partly on screen, enabled, and not
   hidden under something drawn later (a node drawn later in document order
   that is clickable or looks like a dialog, and fully contains the control,
   covers it: e.g. a pop-up card over a list).
2. **Actionable**: clickable, long-clickable, checkable, scrollable or an
   edit field. An actionable node nested in a clickable one that is not
   itself clickable (the ``Switch`` inside a settings row, the checkable
   label of a chip) is *merged* into its owner: the row becomes a switch
   and carries the switch's checked state. A clickable node with exactly
   the bounds of its clickable owner is a duplicate layer and merged too.
3. **Described**: the control's own text or content-desc; else the texts of
   its non-actionable descendants, hierarchically (first text = label, the
   next ones = summary: a settings row is "Dark theme" + its summary);
   else the texts next to it (siblings under its parent or grandparent, for
   a lone switch beside its title); else its resource id made readable
   (``search_button`` -> "search button", ``tabLearn`` -> "tab learn").

The result is a list of :class:`Control` in document order; ``Control.id``
is its index, which is what predictors refer to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from execution.uitree import Bounds, UINode

__all__ = ["Control", "control_from_json", "distill_controls", "humanise_id", "ROLES"]

#: roles a control can have
ROLES = (
    "button", "switch", "checkbox", "radio", "edit", "tab", "list item",
    "menu item", "scrollable", "image", "slider",
)

#: Android switch states sometimes shown as the switch's own text
_STATE_WORDS = {"on", "off", "an", "aus"}
_CAMEL_RE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
#: long numbers in descriptions are leaked resource ids ("Learning 2131888976")
_LEAKED_ID_RE = re.compile(r"\s*\b\d{7,}\b")


@dataclass(slots=True, eq=False)
class Control:
    """One visible, actionable region of the screen with a human description."""

    id: int
    label: str
    role: str
    #: on-screen bounds (clipped to the screen)
    bounds: Bounds
    resource_id: str
    #: what can be done with it: click, long_press, toggle, input, swipe_up, swipe_down
    actions: tuple[str, ...]
    #: state of a switch/checkbox/radio (own or merged), None if not checkable
    checked: Optional[bool] = None
    #: secondary text (a settings row's summary line)
    summary: str = ""
    #: current content of an edit field
    value: str = ""
    selected: bool = False
    focused: bool = False
    #: where the label came from: text, desc, descendant, sibling, resource_id, none
    label_source: str = "none"
    node: Optional[UINode] = field(default=None, repr=False)
    #: the node whose text gave the label (tapped by the ``tap_center`` fallback)
    label_node: Optional[UINode] = field(default=None, repr=False)
    #: actionable nodes merged into this control (e.g. the row's Switch)
    members: list[UINode] = field(default_factory=list, repr=False)

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return ((x1 + x2) // 2, (y1 + y2) // 2)

    @property
    def description(self) -> str:
        """Label plus summary, the full text a person reads on the control."""
        return f"{self.label} {self.summary}".strip()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "label": self.label, "role": self.role}
        if self.summary:
            out["summary"] = self.summary
        if self.value:
            out["value"] = self.value
        if self.checked is not None:
            out["checked"] = self.checked
        if self.selected:
            out["selected"] = True
        if self.focused:
            out["focused"] = True
        out["bounds"] = list(self.bounds)
        if self.resource_id:
            out["resource_id"] = self.resource_id
        out["actions"] = list(self.actions)
        return out


def control_from_json(data: dict[str, Any]) -> Control:
    """Rebuild a (node-less) Control from its ``to_json()`` form, e.g. from a stored trajectory."""
    b = data.get("bounds") or [0, 0, 0, 0]
    return Control(
        id=int(data.get("id", 0)), label=str(data.get("label", "")), role=str(data.get("role", "button")),
        bounds=(int(b[0]), int(b[1]), int(b[2]), int(b[3])), resource_id=str(data.get("resource_id", "")),
        actions=tuple(data.get("actions", ())), checked=data.get("checked"),
        summary=str(data.get("summary", "")), value=str(data.get("value", "")),
        selected=bool(data.get("selected", False)), focused=bool(data.get("focused", False)),
    )


def humanise_id(resource_id: str) -> str:
    """``com.app:id/search_button`` -> ``search button``; ``tabLearn`` -> ``tab learn``."""
    name = resource_id.rsplit("/", 1)[-1]
    name = _CAMEL_RE.sub(" ", name).replace("_", " ").replace("-", " ").replace(".", " ")
    return " ".join(w for w in name.lower().split() if not w.isdigit())


# --- visibility ---------------------------------------------------------------


def _clip(b: Bounds, width: int, height: int) -> Bounds:
    x1, y1, x2, y2 = b
    if width > 0 and height > 0:
        return (max(0, x1), max(0, y1), min(width, x2), min(height, y2))
    return b


def _has_area(b: Bounds) -> bool:
    return b[2] > b[0] and b[3] > b[1]


def _contains(outer: Bounds, inner: Bounds) -> bool:
    return outer[0] <= inner[0] and outer[1] <= inner[1] and outer[2] >= inner[2] and outer[3] >= inner[3]


def _looks_modal(node: UINode) -> bool:
    name = node.short_class
    return "Dialog" in name or node.short_id in ("parentPanel", "design_bottom_sheet")


def _actionable(node: UINode) -> bool:
    return node.clickable or node.long_clickable or node.checkable or node.scrollable or node.editable


# --- roles and actions ----------------------------------------------------------


def _role(node: UINode, members: list[UINode]) -> str:
    name = node.short_class.lower()
    member_names = " ".join(m.short_class.lower() for m in members)
    if node.editable:
        return "edit"
    if "switch" in name or "togglebutton" in name or "switch" in member_names or "togglebutton" in member_names:
        return "switch"
    if "checkbox" in name or "checkbox" in member_names:
        return "checkbox"
    if "radiobutton" in name or "radiobutton" in member_names:
        return "radio"
    if "seekbar" in name:
        return "slider"  # a volume or brightness bar: a tap along it sets the value under the finger
    parent = node.parent
    parent_name = parent.short_class.lower() if parent else ""
    desc = node.content_desc.lower()
    if "tabview" in name or "tablayout" in parent_name or "tabwidget" in parent_name or re.match(r"tab(?![a-z])|tab[A-Z0-9]", node.short_id) or desc.endswith(" tab"):
        return "tab"
    if node.scrollable and not node.clickable:
        return "scrollable"
    if "menuitem" in name:
        return "menu item"
    if node.checkable or any(m.checkable for m in members):
        return "checkbox"
    if node.clickable:
        anc = parent
        for _ in range(3):
            if anc is None:
                break
            an = anc.short_class
            if "RecyclerView" in an or "ListView" in an:
                return "list item"
            anc = anc.parent
    if "image" in name and not node.text:
        return "button"
    return "button"


def _actions(node: UINode, role: str, members: list[UINode]) -> tuple[str, ...]:
    acts: list[str] = []
    checkable = node.checkable or any(m.checkable for m in members)
    if node.clickable or checkable or node.editable:
        acts.append("click")
    if node.long_clickable:
        acts.append("long_press")
    if role in ("switch", "checkbox") and checkable:
        acts.append("toggle")
    if role == "edit":
        acts.append("input")
    if node.scrollable:
        acts.extend(("swipe_up", "swipe_down"))
    return tuple(acts)


# --- descriptions -----------------------------------------------------------------


def _texts_below(node: UINode, owners: set[int], skip_state_words: bool) -> list[tuple[str, UINode]]:
    """Texts of ``node``'s descendants, skipping subtrees of other controls."""
    out: list[tuple[str, UINode]] = []
    stack = list(reversed(node.children))
    while stack:
        n = stack.pop()
        if id(n) in owners:
            continue
        t = n.own_text()
        if t and not (skip_state_words and t.lower() in _STATE_WORDS):
            out.append((t, n))
        stack.extend(reversed(n.children))
    return out


def _describe(
    node: UINode, members: list[UINode], owners: set[int]
) -> tuple[str, str, str, Optional[UINode]]:
    """(label, summary, source, label_node) for one control."""
    own = node.text if node.text.lower() not in _STATE_WORDS else ""
    if node.editable:
        # an edit field's text is its content, not its name
        if node.content_desc and node.content_desc != node.text:
            return node.content_desc, "", "desc", node
        if node.resource_id:
            return humanise_id(node.resource_id), "", "resource_id", node
        if node.text:
            return node.text, "", "text", node
    if own:
        below = [t for t, _ in _texts_below(node, owners, True) if t != own]
        return own, " ".join(below[:2]), "text", node
    if node.content_desc:
        below = [t for t, _ in _texts_below(node, owners, True) if t != node.content_desc]
        return node.content_desc, " ".join(below[:2]), "desc", node
    if node.scrollable and not node.clickable:
        # a list's descendants are its rows, not its name
        name = humanise_id(node.resource_id) if node.resource_id else ""
        return name or "scrollable list", "", "resource_id" if name else "role", None
    below = _texts_below(node, owners, True)
    if below:
        label, label_node = below[0]
        summary = " ".join(t for t, _ in below[1:3])
        return label, summary, "descendant", label_node
    # an icon with a resource id: the id says what it is (``search_button``)
    if node.resource_id and not node.checkable and not members:
        return humanise_id(node.resource_id), "", "resource_id", None
    # a lone switch or checkbox: read the texts beside it (parent, then grandparent)
    anc = node.parent
    for _ in range(2):
        if anc is None:
            break
        near = [(t, n) for t, n in _texts_below(anc, owners - {id(node)}, True) if not node.is_ancestor_of(n) and n is not node]
        near = [(t, n) for t, n in near if id(n) not in owners]
        if near:
            return near[0][0], " ".join(t for t, _ in near[1:3]), "sibling", near[0][1]
        anc = anc.parent
    for m in members:
        if m.resource_id:
            return humanise_id(m.resource_id), "", "resource_id", None
    if node.resource_id:
        return humanise_id(node.resource_id), "", "resource_id", None
    return "", "", "none", None


# --- the distiller ------------------------------------------------------------------


def distill_controls(roots: list[UINode], width: int, height: int) -> list[Control]:
    """The visible, actionable, described controls of a screen, in document order."""
    nodes = [n for r in roots for n in r.iter()]

    # 1. candidates: actionable, enabled, with some area on screen
    candidates = [
        n for n in nodes
        if n.enabled and _actionable(n) and _has_area(_clip(n.bounds, width, height))
    ]
    cand_ids = {id(n) for n in candidates}

    # 2. merge nested non-clickable actionables (and duplicate layers) into their owner
    owner_of: dict[int, UINode] = {}
    for n in candidates:
        anc = n.parent
        while anc is not None and id(anc) not in cand_ids:
            anc = anc.parent
        if anc is None:
            continue
        anc = owner_of.get(id(anc), anc)
        if not anc.clickable:
            continue
        if (not n.clickable and not n.scrollable and not n.editable) or n.bounds == anc.bounds:
            owner_of[id(n)] = anc
    members: dict[int, list[UINode]] = {}
    for n in candidates:
        if id(n) in owner_of:
            members.setdefault(id(owner_of[id(n)]), []).append(n)
    kept = [n for n in candidates if id(n) not in owner_of]

    # 3. drop what is covered by something drawn later (a pop-up, a dialog)
    coverers = [n for n in nodes if (n.clickable or _looks_modal(n)) and _has_area(n.bounds)]
    visible: list[UINode] = []
    for n in kept:
        covered = False
        for c in coverers:
            if c.order <= n.order or c is n or n.is_ancestor_of(c) or c.is_ancestor_of(n):
                continue
            if id(c) in owner_of and owner_of[id(c)] is n:
                continue
            if _contains(c.bounds, n.bounds):
                covered = True
                break
        if not covered:
            visible.append(n)

    # 4. describe
    owners = {id(n) for n in visible}
    controls: list[Control] = []
    for n in visible:
        mem = members.get(id(n), [])
        role = _role(n, mem)
        label, summary, source, label_node = _describe(n, mem, owners)
        label = _LEAKED_ID_RE.sub("", label).strip()
        checkables = [x for x in [n, *mem] if x.checkable]
        controls.append(
            Control(
                id=len(controls),
                label=label,
                role=role,
                bounds=_clip(n.bounds, width, height),
                resource_id=n.resource_id or next((m.resource_id for m in mem if m.resource_id), ""),
                actions=_actions(n, role, mem),
                checked=checkables[0].checked if checkables else None,
                summary=summary if summary != label else "",
                value=n.text if n.editable else "",
                selected=n.selected or any(m.selected for m in mem),
                focused=n.focused or any(m.focused for m in mem),
                label_source=source,
                node=n,
                label_node=label_node,
                members=mem,
            )
        )
    return controls
