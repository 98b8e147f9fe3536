"""Import a DroidBot UI transition graph (DroidTask / AutoDroid ``utg.yaml``) as a simulator world.

``utg.yaml`` is a trace: ``records`` in the order DroidBot explored them, each
``{State, Choice, Input, state_str, new_state_str}``. ``State`` is the screen
as simplified HTML, one element a line::

    <button id=3 text='More options'></button>   content description only: an icon button
    <button id=4>Alice</button>                  a clickable item with text
    <button id=11>Font size<br>Large</button>    title and summary
    <input id=0>Search</input>                   an EditText
    <p id=10>Contacts</p>                        a plain TextView
    <checkbox id=2 checked=True>Monthly view</checkbox>
    <button id=6>go back</button>                DroidBot's back action (not on screen)

``Choice`` is the id of the element acted on (the "go back" id or -1 means
back), ``Input`` the text typed ('null' for none). As in AutoDroid's memory
builder, the result of record *i* is the state of record *i + 1*
(``new_state_str`` is another hash of the *same* screen, not the next one).

Mapping to a world: one page per distinct screen (identical HTML is the same
screen); a tap transition is ``goto`` on that element, a typed transition is
``goto`` on Enter in the field; back pops to the previous screen like the
simulator's back stack. A tap on an element DroidBot never acted on leaves the
screen unchanged and increments the state counter ``unexplored_taps`` (a
world-level marker the labeller can read after each action; agents cannot).

DroidTask tasks (``tasks.csv``) are matched to transitions by text
(:func:`match_tasks`); each matched task gets a goal (LABELS ONLY) that holds
once the screen the task ends on has been reached.
"""

from __future__ import annotations

import csv
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Iterator, Optional

import yaml

from phonesim.world import Node, World, parse_world
from phonesim.worlds.apk_world import clean_text
from verirank_core.errors import WorldError
from verirank_core.json_types import JSONObject
from verirank_core.text import stem, words

if TYPE_CHECKING:
    from phonesim.device import SimDevice

__all__ = ["UtgElement", "UtgState", "UtgTransition", "Utg", "AppTasks", "TaskPath", "load_utg", "parse_state",
           "load_tasks", "match_tasks", "utg_to_world", "build_utg_world", "replay_path", "UNEXPLORED_VAR",
           "find_utg_dirs"]

#: int state variable counting taps on elements DroidBot never explored
UNEXPLORED_VAR = "unexplored_taps"
BACK_LABEL = "go back"

_ELEMENT = re.compile(
    r"<(?P<tag>[a-z]+)\s+id=(?P<id>-?\d+)(?P<attrs>(?:\s+[a-z_]+=(?:'[^']*'|\"[^\"]*\"|[^\s>]+))*)\s*>"
    r"(?P<inner>.*?)</(?P=tag)>",
    re.S,
)
_ATTR = re.compile(r"([a-z_]+)=('([^']*)'|\"([^\"]*)\"|([^\s>]+))")
#: short labels that are dialog/action buttons rather than list items
_ACTION_WORDS = {"ok", "cancel", "save", "delete", "yes", "no", "close", "done", "apply", "create", "remove",
                 "allow", "deny", "confirm", "discard", "export", "import", "rename", "add", "select", "skip"}


@dataclass
class UtgElement:
    id: int
    tag: str
    #: visible text lines (the inner HTML split at <br>)
    lines: list[str] = field(default_factory=list)
    #: the text='...' attribute: a content description
    desc: str = ""
    checked: Optional[bool] = None

    @property
    def label(self) -> str:
        return " ".join(self.lines) if self.lines else self.desc

    @property
    def is_back(self) -> bool:
        return self.tag == "button" and self.label.strip().lower() == BACK_LABEL

    @property
    def clickable(self) -> bool:
        return self.tag in ("button", "checkbox", "input")

    def signature(self) -> tuple:
        return (self.tag, self.label, self.checked)


@dataclass
class UtgState:
    id: str
    html: str
    elements: list[UtgElement]
    #: DroidBot's hashes of this screen (several when DroidBot merged states)
    hashes: set[str] = field(default_factory=set)

    def element(self, eid: int) -> Optional[UtgElement]:
        return next((e for e in self.elements if e.id == eid), None)

    @property
    def back_id(self) -> Optional[int]:
        return next((e.id for e in self.elements if e.is_back), None)

    def text(self) -> str:
        return " ".join(e.label for e in self.elements if not e.is_back)


@dataclass
class UtgTransition:
    src: str
    choice: int
    input: Optional[str]
    dst: str
    #: tap | input | back
    kind: str


@dataclass
class Utg:
    app: str
    source: str
    states: dict[str, UtgState]
    start: str
    transitions: list[UtgTransition]
    #: problems found while reading: (record index, what)
    problems: list[tuple[int, str]] = field(default_factory=list)
    #: the same (state, element, input) observed leading to different screens (first kept)
    conflicts: int = 0

    def forward(self) -> dict[tuple[str, int, Optional[str]], str]:
        """(state, element id, input) -> next state, for taps and typing (first observation wins)."""
        out: dict[tuple[str, int, Optional[str]], str] = {}
        for t in self.transitions:
            if t.kind != "back":
                out.setdefault((t.src, t.choice, t.input), t.dst)
        return out

    def reachable(self) -> dict[str, list[UtgTransition]]:
        """State -> a shortest list of forward transitions from the start state."""
        edges: dict[str, list[UtgTransition]] = {}
        seen: set[tuple] = set()
        for t in self.transitions:
            key = (t.src, t.choice, t.input)
            if t.kind == "back" or key in seen:
                continue
            seen.add(key)
            edges.setdefault(t.src, []).append(t)
        paths = {self.start: []}
        queue = deque([self.start])
        while queue:
            sid = queue.popleft()
            for t in edges.get(sid, []):
                if t.dst not in paths:
                    paths[t.dst] = paths[sid] + [t]
                    queue.append(t.dst)
        return paths


# ------------------------------------------------------------------ reading

def parse_state(html: str) -> list[UtgElement]:
    """The elements of one simplified-HTML screen, in order."""
    out = []
    for m in _ELEMENT.finditer(html):
        attrs = {a.group(1): next(g for g in a.groups()[2:] if g is not None) for a in _ATTR.finditer(m["attrs"])}
        inner = m["inner"]
        lines = [re.sub(r"\s+", " ", part).strip() for part in re.split(r"<br\s*/?>", inner)]
        checked = attrs.get("checked")
        out.append(UtgElement(
            id=int(m["id"]), tag=m["tag"], lines=[ln for ln in lines if ln], desc=attrs.get("text", "").strip(),
            checked=None if checked is None else checked.lower() == "true"))
    return out


def _normalise_html(html: str) -> str:
    return "\n".join(line.strip() for line in html.strip().splitlines() if line.strip())


def load_utg(app_dir: Path | str) -> Utg:
    """Read ``<app_dir>/utg.yaml`` (raises :class:`WorldError` naming the file and record on bad input)."""
    app_dir = Path(app_dir)
    path = app_dir / "utg.yaml"
    if not path.is_file():
        raise WorldError(f"{app_dir}: no utg.yaml (expected a DroidTask app folder with utg.yaml)")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, OSError, UnicodeDecodeError) as exc:
        raise WorldError(f"{path}: not readable YAML ({exc})") from exc
    records = data.get("records") if isinstance(data, dict) else None
    if not isinstance(records, list) or not records:
        raise WorldError(f"{path}: expected a mapping with a non-empty 'records' list")
    states: dict[str, UtgState] = {}
    by_html: dict[str, str] = {}
    # (state id, the record's Choice as written, typed text)
    order: list[tuple[str, object, Optional[str]]] = []
    problems: list[tuple[int, str]] = []
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not isinstance(rec.get("State"), str) or "Choice" not in rec:
            raise WorldError(f"{path}: records[{i}] needs State (text) and Choice (element id); "
                             f"got {sorted(rec) if isinstance(rec, dict) else type(rec).__name__}")
        html = _normalise_html(rec["State"])
        if html not in by_html:
            sid = f"s{len(by_html)}"
            by_html[html] = sid
            elements = parse_state(html)
            if not elements:
                problems.append((i, "state has no parsable elements"))
            states[sid] = UtgState(id=sid, html=html, elements=elements)
        sid = by_html[html]
        hashes = rec.get("state_str")
        states[sid].hashes.update(hashes if isinstance(hashes, list) else [hashes] if hashes else [])
        typed = rec.get("Input")
        typed = None if typed in (None, "null", "None", "") else str(typed)
        order.append((sid, rec.get("Choice"), typed))
    transitions: list[UtgTransition] = []
    seen: dict[tuple, str] = {}
    conflicts = 0
    for i, (sid, choice, typed) in enumerate(order[:-1]):
        dst = order[i + 1][0]
        try:
            choice = int(choice)
        except (TypeError, ValueError):
            problems.append((i, f"Choice {choice!r} is not an element id"))
            continue
        state = states[sid]
        element = state.element(choice)
        if choice == -1 or (element is not None and element.is_back):
            kind = "back"
        elif element is None:
            problems.append((i, f"Choice {choice} is not an element of state {sid}"))
            continue
        else:
            kind = "input" if typed is not None and element.tag == "input" else "tap"
        key = (sid, choice, typed)
        if kind != "back" and key in seen and seen[key] != dst:
            conflicts += 1
        seen.setdefault(key, dst)
        transitions.append(UtgTransition(src=sid, choice=choice, input=typed, dst=dst, kind=kind))
    return Utg(app=app_dir.name, source=str(path), states=states, start=order[0][0], transitions=transitions,
               problems=problems, conflicts=conflicts)


def find_utg_dirs(root: Path | str) -> list[Path]:
    """``root`` itself when it holds utg.yaml, else its sub-folders that do (sorted)."""
    root = Path(root)
    if (root / "utg.yaml").is_file():
        return [root]
    if not root.is_dir():
        raise WorldError(f"{root}: no such folder")
    found = sorted(p for p in root.iterdir() if (p / "utg.yaml").is_file())
    if not found:
        raise WorldError(f"{root}: no utg.yaml here or in its sub-folders (expected a DroidTask app folder)")
    return found


# ------------------------------------------------------------------ tasks

@dataclass
class AppTasks:
    name: str
    package: str
    version: str
    tasks: list[str]


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def load_tasks(csv_path: Path | str) -> dict[str, AppTasks]:
    """DroidTask's tasks.csv: app slug (``smsmessenger``) -> package, version and tasks."""
    csv_path = Path(csv_path)
    if not csv_path.is_file():
        return {}
    out: dict[str, AppTasks] = {}
    with csv_path.open(encoding="utf-8-sig", newline="") as fh:
        for row in csv.reader(fh):
            if len(row) < 4 or not row[0].strip():
                continue
            apk = Path(row[1].strip()).name
            stem = re.sub(r"\.apk\w*$", "", apk)
            package, _, rest = stem.partition("_")
            version = re.sub(r"_minAPI\d+$", "", rest) or "1.0"
            tasks = [t.strip() for t in row[3:] if t.strip()]
            out[_slug(row[0])] = AppTasks(name=row[0].strip(), package=package, version=version, tasks=tasks)
    return out


_STOP = {"the", "a", "an", "to", "of", "in", "on", "and", "my", "for", "at", "with", "it", "its", "i", "me", "is",
         "that", "this", "as", "by", "from", "be", "then", "all", "up", "into", "your", "you", "do", "not"}


def _tokens(text: str) -> set[str]:
    return {stem(w) for w in words(text) if w not in _STOP}


@dataclass
class TaskPath:
    """A DroidTask task and the explored path that ends where it is done."""

    task: str
    goal: str
    #: forward transitions from the start state; the last one completes the task
    steps: list[UtgTransition]
    score: float

    @property
    def final_state(self) -> str:
        return self.steps[-1].dst


def _transition_text(utg: Utg, t: UtgTransition) -> tuple[str, str]:
    """(what was acted on, what the action revealed) as text."""
    src, dst = utg.states[t.src], utg.states[t.dst]
    element = src.element(t.choice)
    acted = (element.label if element else "") + (" " + t.input if t.input else "")
    before = {e.signature() for e in src.elements}
    revealed = " ".join(e.label for e in dst.elements if e.signature() not in before and not e.is_back)
    return acted, revealed


def match_tasks(utg: Utg, tasks: Iterable[str], min_score: float = 0.5) -> list[TaskPath]:
    """For each task, the reachable transition whose text best covers the task's words.

    Score = (task words in the acted element's label x 2 + task words newly shown
    after the action) / (2 x task words), kept when >= ``min_score`` and the
    acted label shares at least one word with the task. Ties go to the shorter path.
    """
    paths = utg.reachable()
    candidates = []
    for t in utg.transitions:
        if t.kind == "back" or t.src not in paths or t.dst == utg.start or t.dst == t.src:
            continue
        acted, revealed = _transition_text(utg, t)
        candidates.append((t, _tokens(acted), _tokens(revealed), len(paths[t.src])))
    out: list[TaskPath] = []
    for task in tasks:
        want = _tokens(task)
        if not want:
            continue
        best = None
        for t, acted, revealed, depth in candidates:
            hit_acted = want & acted
            if not hit_acted:
                continue
            score = (2 * len(hit_acted) + len((want - hit_acted) & revealed)) / (2 * len(want))
            key = (score, -depth)
            if best is None or key > best[0]:
                best = (key, t)
        if best is not None and best[0][0] >= min_score:
            t = best[1]
            out.append(TaskPath(task=task, goal=f"task_{len(out)}", steps=paths[t.src] + [t],
                                score=round(best[0][0], 3)))
    return out


# ------------------------------------------------------------------ world

def _node(state: UtgState, el: UtgElement) -> JSONObject:
    node: JSONObject = {"id": f"{state.id}.e{el.id}"}
    label = clean_text(el.label)
    if el.tag == "input":
        node.update({"kind": "edit", "hint": label, "on_input": f"text_{state.id}_e{el.id}"})
    elif el.tag == "checkbox":
        node.update({"kind": "checkbox", "title": label, "var": "utg_on" if el.checked else "utg_off"})
    elif el.tag == "button" and el.lines:
        title = clean_text(el.lines[0])
        summary = clean_text(" \u00b7 ".join(el.lines[1:]))
        if not summary and title.lower() in _ACTION_WORDS:
            node.update({"kind": "button", "text": title})
        else:
            node.update({"kind": "row", "title": title})
            if summary:
                node["summary"] = summary
        if el.desc:
            node["content-desc"] = clean_text(el.desc)
    elif el.tag == "button":
        node.update({"kind": "icon_button", "content-desc": clean_text(el.desc)})
    elif not el.lines and el.desc:
        node.update({"kind": "image", "content-desc": clean_text(el.desc), "height": 64})
    else:
        node.update({"kind": "text", "text": clean_text("\n".join(el.lines))})
    return node


def _group_icon_buttons(nodes: list[JSONObject]) -> list[JSONObject]:
    """Runs of icon buttons sit side by side in a bar, like a toolbar's actions."""
    out: list[JSONObject] = []
    run: list[JSONObject] = []

    def flush() -> None:
        if len(run) >= 2:
            for i in range(0, len(run), 5):
                out.append({"kind": "bar", "children": run[i:i + 5]})
        else:
            out.extend(run)
        run.clear()

    for node in nodes:
        if node["kind"] == "icon_button":
            run.append(node)
        else:
            flush()
            out.append(node)
    flush()
    return out


def utg_to_world(utg: Utg, *, name: str, package: str, label: str, version: str = "1.0",
                 task_paths: Iterable[TaskPath] = ()) -> JSONObject:
    """A world document for ``utg`` (one page per screen), with a goal per matched task."""
    forward = utg.forward()
    noop = {"set": {"utg_on": True}}  # an explored tap that left the screen as it was
    state: JSONObject = {
        UNEXPLORED_VAR: {"type": "int", "min": 0, "max": 1_000_000, "initial": 0,
                         "description": "taps on elements DroidBot never explored (screen unchanged)"},
        "utg_on": {"type": "bool", "initial": True, "description": "constant: checked boxes"},
        "utg_off": {"type": "bool", "initial": False, "description": "constant: unchecked boxes"},
    }
    task_paths = list(task_paths)
    enter_effects: dict[str, list[JSONObject]] = {}
    goals: JSONObject = {}
    for tp in task_paths:
        state[tp.goal] = {"type": "bool", "initial": False, "description": "reached the screen the task ends on"}
        enter_effects.setdefault(tp.final_state, []).append({"set": {tp.goal: True}})
        goals[tp.goal] = {"expr": f"{tp.goal} == true", "query": tp.task,
                          "description": f"DroidTask task; the path ends on screen {tp.final_state} "
                                         f"({len(tp.steps)} steps, match score {tp.score})"}
    screens = []
    for sid, st in utg.states.items():
        nodes = []
        for el in st.elements:
            if el.is_back:
                continue
            node = _node(st, el)
            if node["kind"] == "edit":
                state[node["on_input"]] = {"type": "text", "initial": ""}
                typed = [(key, dst) for key, dst in forward.items() if key[0] == sid and key[1] == el.id and key[2]]
                if typed:
                    node["on_enter"] = [{"goto": typed[0][1]}]
            dst = forward.get((sid, el.id, None))
            if dst is not None:
                node["on_click"] = [{"goto": dst}] if dst != sid else [noop]
            elif el.clickable and el.tag != "input":
                node["on_click"] = [{"inc": UNEXPLORED_VAR}]
            nodes.append(node)
        screen: JSONObject = {"id": sid, "title": "", "toolbar": False, "nodes": _group_icon_buttons(nodes)}
        if sid in enter_effects:
            screen["on_enter"] = enter_effects[sid]
        screens.append(screen)
    return {
        "name": name,
        "description": f"Imported from the DroidBot UI transition graph {utg.source}. Taps on elements "
                       f"DroidBot never explored leave the screen unchanged and increment '{UNEXPLORED_VAR}'.",
        "app": {"package": package, "label": label, "version": version, "launch_screen": utg.start},
        "state": state,
        "screens": screens,
        "goals": goals,
    }


#: packages of the UTG apps that have no tasks.csv row
_KNOWN_PACKAGES = {"firefox": ("org.mozilla.firefox", "Firefox")}


def build_utg_world(app_dir: Path | str, tasks_csv: Optional[Path | str] = None
                    ) -> tuple[Utg, list[TaskPath], JSONObject, World]:
    """Read one app folder and return (graph, matched tasks, world document, validated world).

    ``tasks_csv`` defaults to ``tasks.csv`` next to the app folder.
    """
    app_dir = Path(app_dir)
    utg = load_utg(app_dir)
    tasks = load_tasks(tasks_csv or app_dir.parent / "tasks.csv")
    info = tasks.get(_slug(app_dir.name))
    if info is not None:
        package, version, task_list = info.package, info.version, info.tasks
        label = info.name[:1].upper() + info.name[1:]
    else:
        package, label = _KNOWN_PACKAGES.get(app_dir.name, (f"org.droidtask.{_slug(app_dir.name)}",
                                                            app_dir.name.replace("-", " ").title()))
        version, task_list = "1.0", []
    matched = match_tasks(utg, task_list)
    name = f"utg-{app_dir.name.lower()}"
    doc = utg_to_world(utg, name=name, package=package, label=label, version=version, task_paths=matched)
    world = parse_world(doc, source=f"<import of {utg.source}>")
    world.name = name
    return utg, matched, doc, world


# ------------------------------------------------------------------ replay (labeller/tool side)

def replay_path(device: SimDevice, steps: Iterable[UtgTransition], max_swipes: int = 6) -> None:
    """Perform ``steps`` on a :class:`~phonesim.device.SimDevice` with real taps, typing and Enter.

    Finds where each element is by reading the simulator's laid-out window
    (LABELLER/TOOL SIDE: an agent locates elements from the dump instead), and
    scrolls the list when the element is below the fold. Raises
    :class:`WorldError` when an element cannot be found on screen.
    """
    from phonesim.layout import walk

    sim = device.simulator
    world = sim.world
    for step in steps:
        node_id = f"{step.src}.e{step.choice}"
        world_node = _find_world_node(world, step.src, node_id)
        for attempt in range(max_swipes + 1):
            window = sim.window()
            target = None
            for ui in walk(window.root):
                if ui.source is world_node or (world_node.on_click and ui.on_tap
                                               and ui.on_tap[0] is world_node.on_click[0]):
                    target = ui
                    break
            if target is not None:
                break
            if window.list_node is None or window.scroll >= window.max_scroll:
                raise WorldError(f"{world.name}: element {node_id} is not on screen {sim.screen_id}")
            top, bottom = window.viewport
            x = (window.list_node.bounds[0] + window.list_node.bounds[2]) // 2
            device.swipe(x, bottom - 10, x, bottom - 10 - (bottom - top) // 2, 300)
        x1, y1, x2, y2 = target.bounds  # type: ignore[union-attr]
        device.tap((x1 + x2) // 2, (y1 + y2) // 2)
        if step.kind == "input":
            device.input_text(step.input or "")
            device.key("enter")


def _find_world_node(world: World, screen_id: str, node_id: str) -> Node:
    def walk_nodes(nodes: list[Node]) -> Iterator[Node]:
        for n in nodes:
            yield n
            yield from walk_nodes(n.children)

    for node in walk_nodes(world.screen(screen_id).nodes):
        if node.id == node_id:
            return node
    raise WorldError(f"{world.name}: no node {node_id} on screen {screen_id}")
