"""Prove a world is coherent by playing it: breadth-first search over real inputs.

Starting on the launcher, the search tries what a user can do on each screen
(tap every enabled clickable node at its centre, swipe lists, press back,
type into a focused field, press enter) through the simulator itself, so a
screen counts as reachable only if taps really get there.

* :func:`explore` — which screens can be reached, and how.
* :func:`solve_goal` — a shortest input sequence that makes a goal true
  (LABELLING/TOOLS ONLY: it reads the goal, which agents never may).

Two situations are the same when their navigation, scroll, focus and the
variables that matter (those that show/hide nodes, plus the goal's) are equal;
other variables cannot change what is reachable, so the search stays small.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from phonesim.simulator import Simulator, Snapshot
from phonesim.world import Node, World

__all__ = ["Move", "ExploreReport", "explore", "solve_goal", "available_moves", "relevant_vars", "replay"]


@dataclass(frozen=True)
class Move:
    """One user input: ``tap``/``swipe``/``input``/``key``, with a readable label."""

    kind: str
    args: tuple
    label: str = ""

    def apply(self, sim: Simulator) -> None:
        if self.kind == "tap":
            sim.tap(*self.args)
        elif self.kind == "swipe":
            sim.swipe(*self.args)
        elif self.kind == "input":
            sim.input_text(*self.args)
        elif self.kind == "key":
            sim.key(*self.args)

    def __str__(self) -> str:
        return f"{self.kind} {self.label or self.args}"


@dataclass
class ExploreReport:
    world: str
    #: screen id -> the first (shortest) input sequence that shows it
    reached: dict[str, list[Move]] = field(default_factory=dict)
    unreachable: list[str] = field(default_factory=list)
    states: int = 0
    #: the search stopped at max_states before finishing
    truncated: bool = False


@dataclass(frozen=True)
class _Edge:
    """What one world node can do, and which variables decide whether it shows/works."""

    screen: str
    gates: frozenset[str]
    leads_to: frozenset[str]
    modifies: frozenset[str]


def _edges(world: World) -> list[_Edge]:
    edges: list[_Edge] = []

    def effects_of(effects) -> tuple[set[str], set[str]]:
        leads, mods = set(), set()
        for e in effects:
            leads.update(x for x in (e.goto, e.dialog) if x)
            mods.update(e.set or {})
            mods.update(e.copy_ or {})
            mods.update(x for x in (e.toggle, e.inc, e.dec) if x)
        return leads, mods

    def visit(screen_id: str, nodes: Iterable[Node], gates: frozenset[str]) -> None:
        for node in nodes:
            g = set(gates)
            for expr in (node._visible, node._enabled):
                if expr is not None:
                    g |= expr.names
            leads, mods = effects_of(node.on_click + node.on_long_press + node.on_enter)
            mods.update(x for x in (node.switch, node.var, node.on_input) if x)
            edges.append(_Edge(screen_id, frozenset(g), frozenset(leads), frozenset(mods)))
            visit(screen_id, node.children, frozenset(g))

    for screen in world.screens:
        visit(screen.id, screen.nodes + screen.buttons, frozenset())
        for node in _walk_nodes(screen.nodes + screen.buttons):
            for e in node.on_click + node.on_long_press + node.on_enter:
                for target, origin in (e.copy_ or {}).items():
                    # the copied value depends on the source: changing it matters as much
                    edges.append(_Edge(screen.id, frozenset([origin]), frozenset(), frozenset([target])))
        leads, mods = effects_of(screen.on_enter + (screen.back or []))
        # entering a screen runs on_enter: model it as an edge owned by the screen itself
        edges.append(_Edge(screen.id, frozenset(), frozenset(leads), frozenset(mods)))
    return edges


def _walk_nodes(nodes: Iterable[Node]) -> Iterable[Node]:
    for node in nodes:
        yield node
        yield from _walk_nodes(node.children)


def relevant_vars(world: World, screens: Iterable[str] = (), variables: Iterable[str] = ()) -> set[str]:
    """Variables that can decide whether ``screens`` are reached or ``variables`` changed.

    A fixpoint over the world graph: a node matters if it leads to a wanted
    screen or changes a relevant variable; then the variables that show or
    enable it matter too, and so does reaching its screen.
    """
    edges = _edges(world)
    wanted = set(screens)
    relevant = set(variables)
    changed = True
    while changed:
        changed = False
        for edge in edges:
            if edge.leads_to & wanted or edge.modifies & relevant:
                if not edge.gates <= relevant:
                    relevant |= edge.gates
                    changed = True
                if edge.screen not in wanted:
                    wanted.add(edge.screen)
                    changed = True
    return relevant


def _text_inputs(world: World) -> list[str]:
    """What to type into fields: the text literals goals compare text variables with."""
    import re

    texts = {"test"}
    for goal in world.goals.values():
        for m in re.finditer(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:==|!=|contains)\s*(?:'([^']*)'|\"([^\"]*)\")", goal.expr):
            spec = world.state.get(m.group(1))
            if spec is not None and spec.type == "text":
                texts.add(m.group(2) if m.group(2) is not None else m.group(3))
    return sorted(texts)


def available_moves(sim: Simulator, texts: list[str] = ("test",), only_world_app: bool = True) -> list[Move]:
    """Every input worth trying on the current screen."""
    win = sim.window()
    moves: list[Move] = []
    for node in sim.clickable_nodes():
        if only_world_app and win.kind == "launcher" and node.text != sim.world.app.label:
            continue  # other launcher apps are dead ends
        x1, y1, x2, y2 = node.bounds
        label = _label(node)
        moves.append(Move("tap", ((x1 + x2) // 2, (y1 + y2) // 2), label))
    if win.list_node is not None and win.max_scroll > 0:
        top, bottom = win.viewport
        x = (win.list_node.bounds[0] + win.list_node.bounds[2]) // 2
        dist = (bottom - top) * 2 // 3
        if win.scroll < win.max_scroll:
            moves.append(Move("swipe", (x, bottom - 10, x, bottom - 10 - dist, 300), "scroll down"))
        if win.scroll > 0:
            moves.append(Move("swipe", (x, top + 10, x, top + 10 + dist, 300), "scroll up"))
    focused = [n for n in sim.clickable_nodes() if n.focused]
    if focused:
        # type only into an empty field, so text values stay few
        if focused[0].role == "edit_hint":
            moves.extend(Move("input", (t,), repr(t)) for t in texts)
        moves.append(Move("key", ("enter",), "enter"))
    if win.kind != "launcher":
        moves.append(Move("key", ("back",), "back"))
    return moves


def _label(node) -> str:
    """What a person would call the control: its text, or the first text inside it."""
    from phonesim.layout import walk

    for sub in walk(node):
        if sub.text:
            return sub.text
    for sub in walk(node):
        if sub.content_desc:
            return sub.content_desc
    return node.resource_id or node.cls.rsplit(".", 1)[-1]


def _key(snap: Snapshot, relevant: set[str]) -> tuple:
    """Situations that differ only in irrelevant variables, or in the scroll of screens
    under the top one (scrolling is reversible), are the same for the search."""
    tasks = tuple((pkg, tuple(f[0] for f in frames[:-1]) + (frames[-1],)) for pkg, frames in snap.tasks if frames)
    return (tuple(kv for kv in snap.state if kv[0] in relevant), tasks, snap.front, snap.focus)


def _search(world: World, relevant: set[str], done: Optional[Callable[[Simulator], bool]], max_states: int):
    """BFS from the launcher. Returns (path to a situation where ``done`` holds or None,
    states seen, truncated, screen id -> shortest path that showed it)."""
    sim = Simulator(world)
    texts = _text_inputs(world)
    start = sim.snapshot()
    start_key = _key(start, relevant)
    parents: dict[tuple, tuple[Optional[tuple], Optional[Move]]] = {start_key: (None, None)}
    queue = deque([start])
    reached: dict[str, tuple] = {}

    def path_to(key: tuple) -> list[Move]:
        out = []
        while parents[key][0] is not None:
            key, move = parents[key]  # type: ignore[assignment]
            out.append(move)
        return out[::-1]

    def paths() -> dict[str, list[Move]]:
        return {screen: path_to(key) for screen, key in reached.items()}

    while queue:
        snap = queue.popleft()
        key = _key(snap, relevant)
        sim.restore(snap)
        for win in sim.windows():
            reached.setdefault(win.screen_id, key)
        if done is not None and done(sim):
            return path_to(key), len(parents), False, paths()
        for move in available_moves(sim, texts):
            sim.restore(snap)
            move.apply(sim)
            child = sim.snapshot()
            child_key = _key(child, relevant)
            if child_key in parents:
                continue
            parents[child_key] = (key, move)
            if len(parents) > max_states:
                return None, len(parents), True, paths()
            queue.append(child)
    return None, len(parents), False, paths()


def explore(world: World, max_states: int = 20_000) -> ExploreReport:
    """Which screens a user can reach from the launcher, with a shortest input sequence each.

    One search over navigation alone finds most screens; each screen still
    missing gets its own search that also tracks the variables gating it
    (e.g. a menu that appears after tapping "Build number" seven times).
    """
    _, states, truncated, reached = _search(world, set(), None, max_states)
    for screen in world.screens:
        if screen.id in reached:
            continue
        relevant = relevant_vars(world, screens=[screen.id])
        path, n, cut, _ = _search(world, relevant, lambda sim, sid=screen.id: sid in sim.screen_stack(),
                                  max_states)
        states += n
        truncated |= cut
        if path is not None:
            reached[screen.id] = path
    report = ExploreReport(world=world.name, states=states, truncated=truncated)
    report.reached = {k: v for k, v in reached.items() if not k.startswith("@")}
    report.unreachable = [s.id for s in world.screens if s.id not in reached]
    return report


def solve_goal(world: World, goal: str, max_states: int = 20_000) -> Optional[list[Move]]:
    """A shortest input sequence from the launcher that makes ``goal`` true, or None.

    LABELLING/TOOLS ONLY: this reads the ground-truth goal.
    """
    expr = world.goal(goal)._compiled
    relevant = relevant_vars(world, variables=expr.names)  # type: ignore[union-attr]
    path, _, _, _ = _search(world, relevant, lambda sim: sim.goal_satisfied(goal), max_states)
    return path


def replay(sim: Simulator, moves: Iterable[Move]) -> None:
    """Apply ``moves`` in order (e.g. a solution from :func:`solve_goal`)."""
    for move in moves:
        move.apply(sim)
