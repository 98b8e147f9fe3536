"""A deterministic Android phone running one world's app (plus a launcher).

``Simulator(world)`` keeps the app's state variables, a back stack per running
app (pages and the dialogs over them), scroll offsets and the focused text
field. It answers the same questions a phone does (``dump_xml``,
``screenshot_png``, ``current_app``) and takes the same inputs (``tap``,
``long_press``, ``swipe``, ``input_text``, ``key``, ``launch``).

Phone-like rules it follows:

* ``home`` shows the launcher and keeps the app's back stack; launching the
  app again resumes it. Back on the app's first page closes it.
* A tap goes to the deepest clickable view under the finger; a tap on a
  disabled view, or on nothing clickable, changes nothing.
* A tap outside a dialog (or back) dismisses it unless it is not cancelable.
* A vertical swipe that starts on a list scrolls it by the swipe distance; a
  swipe shorter than the touch slop is a tap (a long one is a long press).
* ``input_text`` types into the focused EditText (a tap focuses it);
  ``enter`` runs the field's ``on_enter``.
* A swipe down that starts on the status bar pulls down the notification
  shade (``com.android.systemui``) with the quick settings tiles of
  ``device.quick_settings`` (a tap toggles the tile's variable, the same one the
  app's switch shows; a long press opens its settings page); its gear
  ("Settings") opens the Settings app when the world has one; back, home or a
  swipe up fold it away.
* A swipe up on the home screen opens the app drawer (every app, A to Z);
  back, home or a swipe down close it.
* The ``menu`` key opens the top screen's overflow menu ("More options") when it has one.

``state`` and ``goal_satisfied`` are for the LABELLER ONLY: the agent and the
judge see the phone through :class:`~verirank_core.device.Device` and never read
goals or state.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Optional

from phonesim.layout import (
    Metrics,
    UINode,
    Window,
    layout_dialog,
    layout_app_drawer,
    layout_launcher,
    layout_page,
    layout_shade,
    walk,
)
from phonesim.settings import NAMESPACES, WORLD_NAMESPACE, decode, encode
from phonesim.uixml import dump
from phonesim.world import Effect, LauncherApp, Node, Screen, World
from verirank_core.errors import WorldError

__all__ = ["Simulator", "Snapshot"]

LAUNCHER_ACTIVITY = "com.google.android.apps.nexuslauncher.NexusLauncherActivity"


@dataclass
class _Frame:
    """One entry of an app's back stack."""

    screen: str
    scroll: int = 0


@dataclass(frozen=True)
class Snapshot:
    """Everything that makes up the simulator's situation (see ``snapshot``/``restore``)."""

    state: tuple
    tasks: tuple
    front: Optional[str]
    focus: Optional[str]
    #: the notification shade is pulled down
    shade: bool = False
    #: the app drawer is open over the home screen
    drawer: bool = False

    def key(self) -> tuple:
        return (self.state, self.tasks, self.front, self.focus, self.shade, self.drawer)


class Simulator:
    """One simulated phone. Not thread-safe: ``SimDevice`` serialises calls."""

    def __init__(self, world: World):
        self.world = world
        self.metrics = Metrics(world)
        self._screens: dict[str, Screen] = dict(world._screens)
        #: package -> (label, version, first screen)
        self._apps: dict[str, tuple[str, str, str]] = {
            world.app.package: (world.app.label, world.app.version, world.launch_screen)
        }
        for app in world.device.launcher_apps:
            if app.package in self._apps:
                continue
            stub = Screen(id=f"@{app.package}", title=app.label, package=app.package, activity=".MainActivity",
                          back_arrow=False)
            self._screens[stub.id] = stub
            self._apps[app.package] = (app.label, app.version, stub.id)
        #: every app (the drawer), and those with an icon on the home screen
        self._all_apps = [LauncherApp(label=world.app.label, package=world.app.package, version=world.app.version)]
        self._all_apps += [a for a in world.device.launcher_apps if a.package != world.app.package]
        self._home_apps = [a for a in self._all_apps if a.home]
        self._restored: Optional[tuple[Snapshot, Optional[list[Window]]]] = None  # see restore()
        self._nodes: dict[str, Node] = {}
        #: screen id -> the state variables its layout reads (the key of the layout cache)
        self._reads: dict[str, tuple[str, ...]] = {}
        for screen in self._screens.values():
            names: set[str] = set()
            for tpl in (screen._title_tpl, screen._message_tpl):
                if tpl is not None:
                    names |= tpl.names
            for node in _all_nodes(screen.nodes + screen.buttons):
                self._nodes[node._path] = node
                names |= node.variables()
            self._reads[screen.id] = tuple(sorted(names))
        #: laid-out windows by (screen, scroll, focus, values read): the same screen in the
        #: same situation is laid out once (this makes the world checker and benchmarks fast)
        self._window_cache: dict[tuple, Window] = {}
        #: (window ids, scale) -> (windows, PNG): the last screenshots drawn (bounded LRU)
        self._png_cache: OrderedDict[tuple, tuple[tuple[Window, ...], bytes]] = OrderedDict()
        self.reset()

    # ------------------------------------------------------------ labeller only

    @property
    def state(self) -> dict[str, Any]:
        """A copy of the app's state variables (LABELLER ONLY)."""
        return dict(self._state)

    def goal_satisfied(self, name: str) -> bool:
        """Whether goal ``name`` holds now (LABELLER ONLY: ground truth)."""
        goal = self.world.goal(name)
        return goal._compiled.evaluate(self._state)  # type: ignore[union-attr]

    # ------------------------------------------------------------ inspection

    @property
    def screen_id(self) -> str:
        """The top screen's id (``launcher`` on the home screen, ``app_drawer`` in the app drawer)."""
        if self._front:
            return self._stack[-1].screen
        return "app_drawer" if self._drawer else "launcher"

    @property
    def foreground(self) -> Optional[str]:
        """Package of the app in front, or None on the launcher."""
        return self._front

    def screen_stack(self) -> list[str]:
        """Screen ids of the foreground app's back stack, bottom first (``["launcher"]`` at home)."""
        return [f.screen for f in self._stack] if self._front else [self.screen_id]

    @property
    def packages(self) -> dict[str, tuple[str, str]]:
        """Installed packages: package -> (label, versionName)."""
        return {pkg: (label, version) for pkg, (label, version, _) in self._apps.items()}

    def windows(self) -> list[Window]:
        """The windows on screen, bottom first (a page and the dialogs over it, or the launcher)."""
        if self._windows is None:
            self._windows = self._layout()
            if self._restored is not None and self._restored[1] is None:
                self._restored = (self._restored[0], self._windows)
        return self._windows

    def window(self) -> Window:
        """The window that receives input (the top one)."""
        return self.windows()[-1]

    def clickable_nodes(self) -> list[UINode]:
        """Enabled clickable nodes of the top window, in dump order."""
        return [n for n in walk(self.window().root) if n.clickable and n.enabled]

    # ------------------------------------------------------------ observation

    def dump_xml(self) -> str:
        """The top window as ``uiautomator dump`` XML."""
        win = self.window()
        if win.xml is None:
            win.xml = dump(win.root)
        return win.xml

    def screenshot_png(self, scale: float = 1.0) -> bytes:
        """The screen as a PNG (status bar, windows, dialogs dimming their parent), ``scale`` x its size.

        Laid-out windows are cached per situation, so the same windows mean the same
        pixels: their PNG is kept (every page starts on the same screen, say)."""
        from phonesim.render import render_png

        windows = self.windows()
        key = (tuple(id(w) for w in windows), scale)
        hit = self._png_cache.get(key)
        # the entry holds the windows themselves, so their ids cannot be reused while it lives
        if hit is not None and all(a is b for a, b in zip(hit[0], windows)):
            self._png_cache.move_to_end(key)
            return hit[1]
        png = render_png(self, scale=scale)
        self._png_cache[key] = (tuple(windows), png)
        while len(self._png_cache) > 64:
            self._png_cache.popitem(last=False)
        return png

    def screen_size(self) -> tuple[int, int]:
        return self.metrics.width, self.metrics.height

    def current_app(self) -> tuple[str, str]:
        """(package, activity) of the foreground app; the launcher when on the home screen."""
        if not self._front:
            return self.world.device.launcher_package, LAUNCHER_ACTIVITY
        page = next(f for f in reversed(self._stack) if self._screens[f.screen].kind == "page")
        return self._front, self.world.activity_of(self._screens[page.screen])

    # ------------------------------------------------------------ input

    def tap(self, x: int, y: int) -> None:
        self.step_count += 1
        self._act(lambda: self._tap(x, y))

    def long_press(self, x: int, y: int) -> None:
        self.step_count += 1
        self._act(lambda: self._long_press(x, y))

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.step_count += 1
        slop = self.metrics.dp(8)
        if abs(x2 - x1) < slop and abs(y2 - y1) < slop:
            # `input swipe x y x y 800` is how adb users long-press
            self._act(lambda: self._long_press(x1, y1) if duration_ms >= 500 else self._tap(x1, y1))
            return
        self._act(lambda: self._swipe(x1, y1, x2, y2))

    def input_text(self, text: str) -> None:
        """Type ``text`` at the end of the focused field; without a focused field nothing happens."""
        self.step_count += 1
        self._act(lambda: self._type(text))

    def key(self, name: str) -> None:
        """``back``, ``home``, ``enter`` or ``menu``; any other key is ignored."""
        self.step_count += 1
        action = {"back": lambda: self._back(use_override=True), "home": self._go_home,
                  "enter": self._enter, "menu": self._menu}.get(str(name).lower())
        if self._shade and str(name).lower() in ("back", "home"):
            action = self._close_shade if str(name).lower() == "back" else self._go_home
        if action is not None:
            self._act(action)

    def launch(self, package: str, activity: Optional[str] = None) -> bool:
        """Bring ``package`` to the front (resume it, or start it). False if it is not installed."""
        self.step_count += 1
        if package == self.world.device.launcher_package:
            self._act(self._go_home)
            return True
        if package not in self._apps:
            return False
        self._act(lambda: self._launch(package, activity))
        return True

    def expand_status_bar(self) -> None:
        """``cmd statusbar expand-settings``: pull down the shade with its quick settings tiles."""
        self.step_count += 1
        self._act(lambda: setattr(self, "_shade", True))

    def collapse_status_bar(self) -> None:
        """``cmd statusbar collapse``: fold the shade away."""
        self.step_count += 1
        self._act(self._close_shade)

    def force_stop(self, package: str) -> None:
        """``am force-stop``: drop the app's back stack (the next launch starts it fresh).

        Like on a phone, the app's state variables (its settings) are kept.
        """
        self._tasks.pop(package, None)
        if self._front == package:
            self._go_home()
        self._changed()

    def reset(self, package: Optional[str] = None) -> None:
        """Initial state, no app running, home screen; then start ``package`` if given."""
        self._state: dict[str, Any] = self.world.initial_state()
        self._tasks: dict[str, list[_Frame]] = {}
        self._front: Optional[str] = None
        self._focus: Optional[str] = None
        self._shade = False
        self._drawer = False
        #: settings put by clients that are not world variables: namespace -> key -> text
        self._extra_settings: dict[str, dict[str, str]] = {ns: {} for ns in NAMESPACES}
        self.step_count = 0
        self._changed()
        if package is not None:
            if package not in self._apps and package != self.world.device.launcher_package:
                raise WorldError(f"{self.world.source}: package {package!r} is not installed in world "
                                 f"{self.world.name!r}")
            self.launch(package)
            self.step_count = 0

    # ------------------------------------------------------------ settings provider

    def settings_list(self, namespace: str) -> dict[str, str]:
        """``settings list NAMESPACE``: key -> value text (see ``phonesim/settings.py``)."""
        table = dict(self._settings_table(namespace))
        if namespace == WORLD_NAMESPACE:
            table.update({name: encode(spec, self._state[name]) for name, spec in self.world.state.items()})
        return dict(sorted(table.items()))

    def settings_put(self, namespace: str, key: str, value: str) -> None:
        """``settings put``; ``ValueError`` when a world variable cannot hold ``value``."""
        table = self._settings_table(namespace)
        if namespace == WORLD_NAMESPACE and key in self.world.state:
            self._state[key] = decode(self.world.state[key], value)
            self._changed()
        else:
            table[key] = value

    def settings_delete(self, namespace: str, key: str) -> int:
        """``settings delete``: rows deleted; a world variable goes back to its initial value."""
        table = self._settings_table(namespace)
        if namespace == WORLD_NAMESPACE and key in self.world.state:
            self._state[key] = self.world.state[key].initial
            self._changed()
            return 1
        return 1 if table.pop(key, None) is not None else 0

    def _settings_table(self, namespace: str) -> dict[str, str]:
        if namespace not in self._extra_settings:
            raise ValueError(f"invalid namespace {namespace!r} (use {', '.join(NAMESPACES)})")
        return self._extra_settings[namespace]

    # ------------------------------------------------------------ save / restore

    def snapshot(self) -> Snapshot:
        """An immutable copy of the situation; hashable via ``.key()`` (used by the world checker)."""
        return Snapshot(
            state=tuple(sorted(self._state.items())),
            tasks=tuple((pkg, tuple((f.screen, f.scroll) for f in frames)) for pkg, frames in self._tasks.items()),
            front=self._front,
            focus=self._focus,
            shade=self._shade,
            drawer=self._drawer,
        )

    def restore(self, snap: Snapshot) -> None:
        """Go back to a snapshot (the world checker restores the same one many times)."""
        self._state = dict(snap.state)
        self._tasks = {pkg: [_Frame(s, sc) for s, sc in frames] for pkg, frames in snap.tasks}
        self._front = snap.front
        self._focus = snap.focus
        self._shade = snap.shade
        self._drawer = snap.drawer
        self._invalidate()
        # laid-out windows depend only on the snapshot: reuse them when restoring the same one twice
        if self._restored is not None and self._restored[0] is snap:
            self._windows = self._restored[1]
        else:
            self._restored = (snap, None)

    def open_screen(self, screen_id: str) -> None:
        """Jump straight to a screen (for tools such as ``verirank sim show``; agents never teleport)."""
        if screen_id == "launcher":
            self._go_home()
            self._changed()
            return
        if screen_id not in self._screens:
            raise WorldError(f"{self.world.source}: no screen {screen_id!r}")
        screen = self._screens[screen_id]
        package = screen.package or self.world.app.package
        first = self._apps[package][2]
        frames = [_Frame(first)]
        if screen.kind == "dialog":
            parent = self._dialog_parent(screen_id)
            if parent and parent != first:
                frames.append(_Frame(parent))
        if screen_id != first:
            frames.append(_Frame(screen_id))
        self._tasks[package] = frames
        self._front = package
        self._focus = None
        self._changed()

    def scroll_to(self, offset: int) -> None:
        """Set the top screen's scroll offset (tools only)."""
        if self._front:
            self._stack[-1].scroll = max(0, offset)
            self._changed()

    # ------------------------------------------------------------ internals

    @property
    def _stack(self) -> list[_Frame]:
        return self._tasks[self._front]  # type: ignore[index]

    def _invalidate(self) -> None:
        self._windows: Optional[list[Window]] = None

    def _changed(self) -> None:
        self._invalidate()
        self._restored = None

    def _act(self, action: Callable[[], None]) -> None:
        action()
        self._changed()

    def _layout(self) -> list[Window]:
        wins = self._layout_app()
        if self._shade:
            settings = "com.android.settings" if "com.android.settings" in self._apps else None
            tiles = tuple(self._state[t.var] for t in self.world.device.quick_settings)
            wins.append(self._cached(("shade", settings, tiles),
                                     lambda: layout_shade(self.world, self.metrics, settings, self._state)))
        return wins

    def _layout_app(self) -> list[Window]:
        if not self._front:
            if self._drawer:
                return [self._cached(("drawer",), lambda: layout_app_drawer(self.world, self._all_apps,
                                                                            self.metrics))]
            return [self._cached(("launcher",), lambda: layout_launcher(self.world, self._home_apps, self.metrics))]
        frames = self._stack
        base = max(i for i, f in enumerate(frames) if self._screens[f.screen].kind == "page")
        wins = []
        for frame in frames[base:]:
            screen = self._screens[frame.screen]
            key = (frame.screen, frame.scroll, self._focus, self._front,
                   tuple(self._state[v] for v in self._reads[frame.screen]))
            if screen.kind == "page":
                build = lambda s=screen, f=frame: layout_page(self.world, s, self._state, f.scroll, self._focus,
                                                              self.metrics)
            else:
                build = lambda s=screen, f=frame: layout_dialog(self.world, s, self._state, f.scroll, self._focus,
                                                                self.metrics, package=self._front)
            wins.append(self._cached(key, build))
        return wins

    def _cached(self, key: tuple, build: Callable[[], Window]) -> Window:
        win = self._window_cache.get(key)
        if win is None:
            if len(self._window_cache) > 4096:
                self._window_cache.clear()  # bounded memory; rebuilding is cheap
            win = self._window_cache[key] = build()
        return win

    def _tap(self, x: int, y: int) -> None:
        win = self.window()
        if win.kind == "shade":
            node = _hit(win.root, x, y, lambda n: n.clickable)
            if node is not None and node.enabled:
                if node.role != "qs_tile":
                    self._shade = False  # the shade folds away as the tapped thing opens; a tile stays
                self._run(node.on_tap)
            return
        if win.kind == "dialog" and not _inside(win.frame, x, y):
            if self._screens[win.screen_id].cancelable:
                self._dismiss()
            return
        node = _hit(win.root, x, y, lambda n: n.clickable)
        if node is None or not node.enabled:
            return
        if node.role == "up":
            self._back(use_override=True)
            return
        if node.role == "seekbar" and node.source is not None:
            self._slide(node, x)
            return
        if node.source is not None and node.source.kind == "edit":
            self._focus = node.source._path
        self._run(node.on_tap)

    def _long_press(self, x: int, y: int) -> None:
        win = self.window()
        if win.kind == "shade":
            node = _hit(win.root, x, y, lambda n: n.long_clickable)
            if node is not None and node.enabled and node.on_long:
                self._shade = False  # a tile's long press opens its setting
                self._run(node.on_long)
            return
        if win.kind == "dialog" and not _inside(win.frame, x, y):
            return
        node = _hit(win.root, x, y, lambda n: n.long_clickable)
        if node is not None and node.enabled:
            self._run(node.on_long)

    def _swipe(self, x1: int, y1: int, x2: int, y2: int) -> None:
        # a swipe down that starts on the status bar pulls the notification shade down; up folds it away
        if not self._shade and y1 <= self.metrics.status_bar and y2 - y1 >= self.metrics.dp(48):
            self._shade = True
            return
        if self._shade:
            if y1 - y2 >= self.metrics.dp(48):
                self._shade = False
            return
        if not self._front:
            # on the home screen a swipe up opens the app drawer; in the drawer a swipe down closes it
            if not self._drawer and y1 - y2 >= self.metrics.dp(48):
                self._drawer = True
            elif self._drawer and y2 - y1 >= self.metrics.dp(48):
                self._drawer = False
            return
        win = self.window()
        if win.list_node is None or not self._front:
            return
        lx1, _, lx2, _ = win.list_node.bounds
        top, bottom = win.viewport
        if not (lx1 <= x1 < lx2 and top <= y1 < bottom):
            return
        frame = self._stack[-1]
        # finger moving up (y2 < y1) reveals what is below
        frame.scroll = min(max(0, win.scroll + (y1 - y2)), win.max_scroll)

    def _slide(self, node: UINode, x: int) -> None:
        var = node.source.var  # type: ignore[union-attr]
        spec = self.world.state[var]
        x1, _, x2, _ = node.bounds
        frac = min(max((x - x1) / max(1, x2 - x1), 0.0), 1.0)
        if spec.type == "choice":
            self._state[var] = spec.options[round(frac * (len(spec.options) - 1))]
        else:
            self._state[var] = spec.min + round(frac * (spec.max - spec.min))

    def _type(self, text: str) -> None:
        node = self._nodes.get(self._focus) if self._focus else None
        if node is None or node.on_input is None:
            return
        self._state[node.on_input] = self._state[node.on_input] + text

    def _enter(self) -> None:
        node = self._nodes.get(self._focus) if self._focus else None
        if node is not None and node.on_enter:
            self._run(node.on_enter)

    def _run(self, effects: Iterable[Effect]) -> None:
        for eff in effects:
            self._apply(eff)

    def _apply(self, eff: Effect) -> None:
        name = eff.name
        state = self._state
        if name == "goto":
            if not self._front:
                return
            while self._screens[self._stack[-1].screen].kind == "dialog":
                self._stack.pop()  # navigating away closes the dialog
            self._push(eff.goto)  # type: ignore[arg-type]
        elif name == "dialog":
            if self._front:
                self._push(eff.dialog)  # type: ignore[arg-type]
        elif name == "set":
            state.update(eff.set)  # type: ignore[arg-type]
        elif name == "copy":
            state.update({target: state[origin] for target, origin in eff.copy_.items()})  # type: ignore[union-attr]
        elif name == "toggle":
            state[eff.toggle] = not state[eff.toggle]
        elif name in ("inc", "dec"):
            self._step(getattr(eff, name), 1 if name == "inc" else -1)
        elif name == "dismiss":
            self._dismiss()
        elif name == "back":
            self._back(use_override=False)
        elif name == "home":
            self._go_home()
        elif name == "launch":
            self._launch(eff.launch, None)  # type: ignore[arg-type]

    def _step(self, var: str, delta: int) -> None:
        spec = self.world.state[var]
        if spec.type == "int":
            self._state[var] = min(max(self._state[var] + delta, spec.min), spec.max)
        else:
            i = spec.options.index(self._state[var]) + delta
            self._state[var] = spec.options[min(max(i, 0), len(spec.options) - 1)]

    def _push(self, screen_id: str) -> None:
        self._stack.append(_Frame(screen_id))
        self._focus = None
        self._run(self._screens[screen_id].on_enter)

    def _dismiss(self) -> None:
        if self._front and self._screens[self._stack[-1].screen].kind == "dialog":
            self._stack.pop()
            self._focus = None

    def _back(self, use_override: bool) -> None:
        if not self._front:
            self._drawer = False
            return
        screen = self._screens[self._stack[-1].screen]
        if screen.kind == "dialog":
            if screen.cancelable:
                self._dismiss()
            return
        if use_override and screen.back is not None:
            self._run(screen.back)
            return
        self._stack.pop()
        self._focus = None
        if not self._stack:
            # back on the first page closes the app
            del self._tasks[self._front]
            self._front = None

    def _close_shade(self) -> None:
        self._shade = False

    def _menu(self) -> None:
        """The menu key opens the overflow menu of the top screen, if it has one."""
        win = self.window()
        if win.kind in ("shade", "launcher"):
            return
        node = next((n for n in walk(win.root) if n.clickable and n.enabled
                     and n.content_desc.lower() == "more options"), None)
        if node is not None:
            self._run(node.on_tap)

    def _go_home(self) -> None:
        self._front = None
        self._focus = None
        self._shade = False
        self._drawer = False

    def _launch(self, package: str, activity: Optional[str]) -> None:
        self._focus = None
        self._shade = False
        self._drawer = False
        self._front = package
        if package in self._tasks:
            return  # resume where the user left it
        self._tasks[package] = []
        first = self._apps[package][2]
        if activity:
            wanted = activity if not activity.startswith(".") else package + activity
            first = next((s.id for s in self._screens.values() if s.kind == "page"
                          and (s.package or self.world.app.package) == package
                          and self.world.activity_of(s) == wanted), first)
        self._push(first)

    def _dialog_parent(self, dialog_id: str) -> Optional[str]:
        """A page that opens ``dialog_id`` (through its nodes), for ``open_screen``."""
        for screen in self.world.screens:
            if screen.kind != "page":
                continue
            for node in _all_nodes(screen.nodes):
                if any(e.dialog == dialog_id for e in node.on_click + node.on_long_press + node.on_enter):
                    return screen.id
        return None


def _all_nodes(nodes: list[Node]) -> Iterable[Node]:
    for node in nodes:
        yield node
        yield from _all_nodes(node.children)


def _inside(bounds: tuple[int, int, int, int], x: int, y: int) -> bool:
    return bounds[0] <= x < bounds[2] and bounds[1] <= y < bounds[3]


def _hit(node: UINode, x: int, y: int, wants: Callable[[UINode], bool]) -> Optional[UINode]:
    """The deepest node under (x, y) that ``wants`` accepts; later siblings are on top."""
    if not _inside(node.bounds, x, y):
        return None
    for child in reversed(node.children):
        found = _hit(child, x, y, wants)
        if found is not None:
            return found
    return node if wants(node) else None
