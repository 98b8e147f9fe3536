"""Coverage reports for imported worlds, and reachability checked by tapping in the simulator.

* :func:`apk_coverage` — screens, elements, reachability from home, and every
  unresolved fragment/intent and missing string, for a UI map and its world.
* :func:`utg_coverage` — states, transitions, explored/unexplored elements,
  reachability from the start state, and the DroidTask tasks matched to goals.
* :func:`tap_reachable` — breadth-first search *in the simulator*: from the
  app's first screen, tap every enabled clickable node and scroll every list,
  so a screen counts only if real taps get there.
* :func:`format_report` — the report as the aligned text the CLI prints.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Iterable, Optional, Union

from phonesim.layout import UINode
from phonesim.simulator import Simulator
from phonesim.world import Node, World
from phonesim.worlds.uimap import UIMap
from phonesim.worlds.other_app_screens import is_other_app_screen
from phonesim.worlds.utg import UNEXPLORED_VAR, TaskPath, Utg
from verirank_core.json_types import JSONObject

__all__ = ["apk_coverage", "utg_coverage", "tap_reachable", "format_report"]


def apk_coverage(uimap: UIMap, world: Optional[World] = None) -> JSONObject:
    """What the APK import produced and what it could not resolve (a JSON-able dict)."""
    counts = uimap.counts()
    pages = [s for s in uimap.screens.values() if s.kind == "page"]
    elements = [el for s in pages for el in s.elements]
    reachable = uimap.reachable(pages_only=True)
    strict = len(uimap.reachable(pages_only=True, guessed=False))
    guessed = [el for el in elements if el.guessed]
    kinds = Counter(el.kind for el in elements)
    # per-app and per-account copies repeat their XML's lists: count each list once
    originals = [s for s in pages if " copied for " not in s.source]
    lists = [(s, el) for s in originals for el in s.elements if el.kind == "list"]
    report: JSONObject = {
        "app": uimap.app,
        "screens": counts["screens"],
        "elements": counts["elements"],
        "element_kinds": dict(sorted(kinds.items())),
        "reachable_from_home": len(reachable),
        "reachable_without_guessed_links": strict,
        "links_guessed_from_class_names": len(guessed),
        "max_depth": max(reachable.values()) if reachable else 0,
        "unreachable_screens": sorted(s.id for s in pages if s.id not in reachable),
        "collapsed_sections": len({(s.id, el.section) for s in pages for el in s.elements if el.collapsed}),
        "list_preferences": len(lists),
        "lists_with_options": sum(1 for _, el in lists if el.entries),
        "lists_with_stock_options": sum(1 for _, el in lists if el.entries and el.entries_source),
        "lists_without_entries": [{"screen": s.id, "element": el.title, "reason": el.entries_problem}
                                  for s, el in lists if not el.entries],
        "unresolved": [{"screen": u.screen, "element": u.element, "target": u.target, "reason": u.reason}
                       for u in uimap.unresolved],
        "unresolved_by_reason": dict(Counter(_reason_kind(u.reason) for u in uimap.unresolved).most_common()),
        "built_from_aosp_behaviour": _built_counts(uimap, pages, reachable),
        "built_links": [{"screen": b.screen, "element": b.element, "was": b.target, "source": _source_kind(b.reason)}
                        for b in uimap.built_links],
        "missing_strings": [{"name": name, "where": where} for name, where in uimap.missing_strings],
        "skipped_widgets": dict(uimap.skipped),
    }
    if world is not None:
        report["world"] = {"screens": len(world.screens), "state_variables": len(world.state),
                           "goals": sorted(world.goals)}
    return report


def _built_counts(uimap: UIMap, pages: list, reachable: dict[str, int]) -> dict[str, int]:
    """Screens whose content the app builds in code, given it from AOSP behaviour (aosp_screens.py)."""
    built = [s for s in pages if s.built_from]
    new = [s for s in built if s.source.startswith("built: ")]
    cloned = [s for s in built if " copied for " in s.source]
    return {
        "screens": len(built),
        "new_screens": len(new),
        "per_app_or_account_copies": len(cloned),
        "filled_xml_screens": len(built) - len(new) - len(cloned),
        "reachable_from_home": sum(1 for s in built if s.id in reachable),
        "links": len(uimap.built_links),
        # of which other apps' screens (Gboard, TalkBack) from their documented behaviour
        "other_app_screens": sum(1 for s in built if is_other_app_screen(s)),
    }


def _source_kind(source: str) -> str:
    """A source without its common prefix and explanation: ``accounts/AccountPreferenceController.java``."""
    short = source.replace("AOSP packages/apps/Settings (Android 11) ", "")
    return short.split(":", 1)[0].split(" (", 1)[0]


def _reason_kind(reason: str) -> str:
    """Group reasons by their wording without the class names (for the summary counts)."""
    words = reason.split()
    if reason.startswith("fragment "):
        return "fragment " + " ".join(words[2:])
    if reason.startswith("activity "):
        return "activity " + " ".join(words[2:])
    if reason.startswith("opens another app"):
        return "opens another app"
    return reason


def utg_coverage(utg: Utg, world: World, matched: Iterable[TaskPath], tasks: Iterable[str] = ()) -> JSONObject:
    """States, transitions, explored elements, reachability and matched tasks of one UTG import."""
    matched = list(matched)
    tasks = list(tasks)
    forward = utg.forward()
    kinds = Counter(t.kind for t in utg.transitions)
    with_transitions = 0
    without = 0
    for sid, st in utg.states.items():
        for el in st.elements:
            if el.is_back:
                continue
            if any(key[0] == sid and key[1] == el.id for key in forward):
                with_transitions += 1
            elif el.clickable:
                without += 1
    reachable = utg.reachable()
    return {
        "app": utg.app,
        "package": world.app.package,
        "states": len(utg.states),
        "transitions": len(utg.transitions),
        "transition_kinds": dict(sorted(kinds.items())),
        "self_loops": sum(1 for t in utg.transitions if t.dst == t.src and t.kind != "back"),
        "conflicting_transitions": utg.conflicts,
        "elements": sum(1 for st in utg.states.values() for el in st.elements if not el.is_back),
        "elements_with_transitions": with_transitions,
        "clickable_elements_without_transitions": without,
        "reachable_from_start": len(reachable),
        "unreachable_states": sorted(set(utg.states) - set(reachable)),
        "problems": [f"records[{i}]: {what}" for i, what in utg.problems],
        "tasks": len(tasks),
        "tasks_matched": [{"goal": tp.goal, "task": tp.task, "steps": len(tp.steps), "score": tp.score,
                           "final_state": tp.final_state} for tp in matched],
        "unexplored_marker": UNEXPLORED_VAR,
    }


# ---------------------------------------------------------------- tapping

def _visibility_vars(world: World) -> list[str]:
    """Variables that show or hide nodes, or enable a link (Trust agents needs a screen lock first)."""
    names: set[str] = set()

    def visit(nodes: Iterable[Node]) -> None:
        for node in nodes:
            if node._visible is not None:
                names.update(node._visible.names)
            if node._enabled is not None and any(eff.goto for eff in node.on_click or []):
                names.update(node._enabled.names)
            visit(node.children)

    for screen in world.screens:
        visit(screen.nodes)
    return sorted(names)


def tap_reachable(world: World, max_states: int = 200_000) -> dict[str, list[str]]:
    """Screens reachable from the app's first screen by taps and scrolls in the simulator.

    Returns screen id -> the labels tapped to get there (shortest first found).
    The back key is not used, so every screen is reached going forward.
    Situations are the same when the top screen, its scroll offset and the
    variables that show or hide nodes or enable links are equal.
    """
    sim = Simulator(world)
    sim.reset(world.app.package)
    watched = _visibility_vars(world)

    def key() -> tuple:
        win = sim.window()
        state = sim.state
        return (sim.screen_id, win.scroll, tuple(state[v] for v in watched))

    start = sim.snapshot()
    seen = {key(): []}
    reached: dict[str, list[str]] = {sim.screen_id: []}
    queue = deque([(start, [])])
    while queue and len(seen) < max_states:
        snap, path = queue.popleft()
        sim.restore(snap)
        win = sim.window()
        # (label, ("tap", x, y) or ("swipe", x1, y1, x2, y2))
        moves: list[tuple[str, tuple[Union[str, int], ...]]] = []
        for node in sim.clickable_nodes():
            if node.role == "up":
                continue  # "Navigate up" is back
            x1, y1, x2, y2 = node.bounds
            label = node.text or node.content_desc or _first_text(node) or node.cls.rsplit(".", 1)[-1]
            moves.append((label, ("tap", (x1 + x2) // 2, (y1 + y2) // 2)))
        if win.list_node is not None and win.scroll < win.max_scroll:
            top, bottom = win.viewport
            x = (win.list_node.bounds[0] + win.list_node.bounds[2]) // 2
            moves.append(("(scroll)", ("swipe", x, bottom - 10, x, top + 10)))
        for label, move in moves:
            sim.restore(snap)
            if move[0] == "tap":
                sim.tap(move[1], move[2])
            else:
                sim.swipe(*move[1:])
            if sim.screen_id == "launcher":
                continue  # left the app
            k = key()
            if k in seen:
                continue
            new_path = path + [label]
            seen[k] = new_path
            reached.setdefault(sim.screen_id, new_path)
            queue.append((sim.snapshot(), new_path))
    return reached


def _first_text(node: UINode) -> str:
    for child in node.children:
        if child.text:
            return child.text
        found = _first_text(child)
        if found:
            return found
    return ""


# ---------------------------------------------------------------- text

def format_report(report: JSONObject, title: str, max_items: int = 30) -> str:
    """Aligned ``key: value`` lines; lists are shown one item a line (at most ``max_items``)."""
    lines = [title, "=" * len(title)]
    width = max(len(k) for k in report) + 1
    for key, value in report.items():
        if isinstance(value, list):
            lines.append(f"{key + ':':<{width}} {len(value)}")
            for item in value[:max_items]:
                if isinstance(item, dict):
                    item = " | ".join(str(v) for v in item.values())
                lines.append(f"    - {item}")
            if len(value) > max_items:
                lines.append(f"    ... and {len(value) - max_items} more")
        elif isinstance(value, dict):
            lines.append(f"{key + ':':<{width}} " + ", ".join(f"{k}={v}" for k, v in value.items()))
        else:
            lines.append(f"{key + ':':<{width}} {value}")
    return "\n".join(lines)
