"""World files: a declarative description of one Android app on one phone.

A world is YAML or JSON (see ``docs/worlds.md`` for every field)::

    app:    {package, label, version, launch_activity, launch_screen}
    device: {manufacturer, model, os_version, sdk, width, height, density, ...}
    state:  {var: {type: bool|choice|text|int, initial, options}}
    screens:
      - id: display
        title: Display
        nodes:
          - {kind: row, title: Dark theme, switch: dark_theme}
    goals:
      dark_theme_on: {expr: "dark_theme == true", query: "How to turn on dark mode"}

``load_world(path)`` parses, validates and compiles a world; every problem is
a :class:`WorldError` naming the file and the path inside the document
(``screens[3].nodes[1].on_click[0].goto``).

GOALS ARE GROUND TRUTH. They exist only to label executions for training and
evaluation. The agent, the judge and every feature must never read them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal, Optional, Union

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

from phonesim.expr import Expr, ExprError, Template, Value, compile_expr, compile_template
from verirank_core.errors import WorldError
from verirank_core.resources import WORLDS_DIR

__all__ = [
    "WORLDS_DIR", "VarSpec", "Effect", "Node", "Screen", "AppSpec", "LauncherApp", "DeviceSpec",
    "StyleSpec", "Goal", "World", "load_world", "resolve_world", "list_worlds", "parse_world",
]



class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


# ------------------------------------------------------------------- state

class VarSpec(_Model):
    """One state variable (the app's settings/data)."""

    type: Literal["bool", "choice", "text", "int"]
    #: start value; defaults: false, the first option, "", min
    initial: object = None
    #: the values a ``choice`` can take, in display order
    options: list[str] = Field(default_factory=list)
    #: bounds of an ``int`` (``inc``/``dec`` clamp to them)
    min: int = 0
    max: int = 100
    description: str = ""

    @model_validator(mode="after")
    def _fill_initial(self) -> "VarSpec":
        if self.type == "choice":
            if not self.options:
                raise ValueError("a choice variable needs a non-empty 'options' list")
            if len(set(self.options)) != len(self.options):
                raise ValueError("choice options must be unique")
        if self.initial is None:
            self.initial = {"bool": False, "choice": self.options[0] if self.options else "",
                            "text": "", "int": self.min}[self.type]
        problem = value_problem(self, self.initial)
        if problem:
            raise ValueError(f"initial value: {problem}")
        return self


def value_problem(spec: VarSpec, value: object) -> Optional[str]:
    """Why ``value`` cannot be stored in a variable of ``spec`` (None when it can)."""
    if spec.type == "bool" and not isinstance(value, bool):
        return f"{value!r} is not true/false"
    if spec.type == "int" and (not isinstance(value, int) or isinstance(value, bool)):
        return f"{value!r} is not an integer"
    if spec.type == "int" and not spec.min <= value <= spec.max:
        return f"{value} is outside [{spec.min}, {spec.max}]"
    if spec.type == "text" and not isinstance(value, str):
        return f"{value!r} is not text"
    if spec.type == "choice" and value not in spec.options:
        return f"{value!r} is not one of the options ({', '.join(spec.options)})"
    return None


# ----------------------------------------------------------------- effects

_FLAG_EFFECTS = ("dismiss", "back", "home")


class Effect(_Model):
    """One thing a tap (or key) does. Exactly one field is set.

    ``goto: SCREEN`` push a page; ``dialog: SCREEN`` open a dialog over the
    current screen; ``set: {var: value}``; ``toggle: var``; ``inc``/``dec: var``
    (int, or next/previous option of a choice); ``dismiss`` close the dialog;
    ``back`` pop the screen; ``home`` go to the launcher; ``launch: package``;
    ``copy: {target: source}`` store one variable's value in another (a draft
    field saved by an OK button).
    """

    goto: Optional[str] = None
    dialog: Optional[str] = None
    set: Optional[dict[str, object]] = None
    #: written ``copy:`` in world files (``copy`` would shadow BaseModel.copy)
    copy_: Optional[dict[str, str]] = Field(None, alias="copy")
    toggle: Optional[str] = None
    inc: Optional[str] = None
    dec: Optional[str] = None
    dismiss: bool = False
    back: bool = False
    home: bool = False
    launch: Optional[str] = None

    @model_validator(mode="before")
    @classmethod
    def _bare_word(cls, data: object) -> object:
        # `- dismiss` in YAML is the string "dismiss"
        if isinstance(data, str):
            if data in _FLAG_EFFECTS:
                return {data: True}
            raise ValueError(f"unknown effect {data!r}; bare effects are {', '.join(_FLAG_EFFECTS)}")
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> "Effect":
        given = [k for k in self.model_fields_set if getattr(self, k) not in (None, False)]
        if len(given) != 1:
            raise ValueError(
                "an effect has exactly one of goto, dialog, set, copy, toggle, inc, dec, dismiss, "
                f"back, home, launch (got {', '.join(given) or 'none'})"
            )
        return self

    @property
    def name(self) -> str:
        """The effect's kind, as written in world files (``goto``, ``copy``...)."""
        field_name = next(k for k in self.model_fields_set if getattr(self, k) not in (None, False))
        return field_name.rstrip("_")


# ------------------------------------------------------------------- nodes

NodeKind = Literal[
    "view", "group", "bar", "row", "header", "text", "edit", "button", "icon_button",
    "image", "radio", "checkbox", "choices", "slider", "card", "tab",
]

#: node fields that may hold {var} templates
TEMPLATE_FIELDS = ("text", "title", "summary", "content_desc", "hint", "subtitle")


class Node(_Model):
    """One element of a screen: a raw uiautomator node or a widget that expands into several.

    Raw attributes (``class``, ``text``, ``resource-id``...) override what the
    widget ``kind`` would produce on its outer node.
    """

    kind: NodeKind = "view"
    #: a name for tests and tools (never dumped)
    id: Optional[str] = None
    # --- uiautomator attributes
    cls: Optional[str] = Field(None, alias="class")
    text: Optional[str] = None
    resource_id: Optional[str] = Field(None, alias="resource-id")
    content_desc: Optional[str] = Field(None, alias="content-desc")
    checkable: Optional[bool] = None
    #: true/false, or the name of a bool variable
    checked: Union[bool, str, None] = None
    clickable: Optional[bool] = None
    long_clickable: Optional[bool] = Field(None, alias="long-clickable")
    scrollable: Optional[bool] = None
    enabled: Optional[bool] = None
    focusable: Optional[bool] = None
    password: Optional[bool] = None
    selected: Optional[bool] = None
    #: absolute [x1, y1, x2, y2]; omitted -> computed by the layout
    bounds: Optional[list[int]] = None
    # --- layout
    #: height in dp (density-independent pixels); omitted -> the widget's usual height
    height: Optional[float] = Field(None, gt=0)
    #: pin to the top (under the toolbar) or bottom of the screen instead of scrolling
    dock: Optional[Literal["top", "bottom"]] = None
    # --- widget content
    title: Optional[str] = None
    summary: Optional[str] = None
    subtitle: Optional[str] = None
    #: an icon on the left of a row (true, or its content-desc)
    icon: Union[bool, str, None] = None
    #: a bool variable shown as a Switch on the right of a row; a tap on the row
    #: runs ``on_click`` if given, else toggles the variable
    switch: Optional[str] = None
    #: two-target switch row: the text part runs ``on_click``, the Switch itself toggles
    split: bool = False
    #: the variable of a radio/checkbox/choices/slider widget
    var: Optional[str] = None
    #: the option a radio button selects
    value: object = None
    hint: Optional[str] = None
    #: show the node only when this expression holds
    visible_if: Optional[str] = None
    #: grey out (enabled=false, taps ignored) unless this holds
    enabled_if: Optional[str] = None
    # --- behaviour
    on_click: list[Effect] = Field(default_factory=list)
    on_long_press: list[Effect] = Field(default_factory=list)
    #: EditText: the text variable that receives typed text
    on_input: Optional[str] = None
    #: EditText: what the Enter key does while focused
    on_enter: list[Effect] = Field(default_factory=list)
    children: list["Node"] = Field(default_factory=list)

    # compiled by load_world
    _path: str = PrivateAttr("")
    _visible: Optional[Expr] = PrivateAttr(None)
    _enabled: Optional[Expr] = PrivateAttr(None)
    _tpl: dict[str, Template] = PrivateAttr(default_factory=dict)

    @field_validator("bounds")
    @classmethod
    def _check_bounds(cls, v: Optional[list[int]]) -> Optional[list[int]]:
        if v is not None and (len(v) != 4 or v[0] > v[2] or v[1] > v[3]):
            raise ValueError("bounds must be [x1, y1, x2, y2] with x1 <= x2 and y1 <= y2")
        return v

    # The three helpers below run for every node of every layout: they read the compiled
    # parts straight from pydantic's private dict, which is several times faster than
    # going through BaseModel.__getattr__.

    def render(self, field_name: str, state: dict) -> Optional[str]:
        """The field's text with placeholders filled from ``state``."""
        tpl = self.__pydantic_private__["_tpl"].get(field_name)
        return tpl.render(state) if tpl is not None else getattr(self, field_name)

    def is_visible(self, state: dict) -> bool:
        expr = self.__pydantic_private__["_visible"]
        return expr is None or expr.evaluate(state)

    def is_enabled(self, state: dict) -> bool:
        if self.enabled is False:
            return False
        expr = self.__pydantic_private__["_enabled"]
        return expr is None or expr.evaluate(state)

    def variables(self) -> set[str]:
        """Every state variable this node (not its children) reads to draw itself."""
        private = self.__pydantic_private__
        names: set[str] = set()
        for tpl in private["_tpl"].values():
            names |= tpl.names
        for expr in (private["_visible"], private["_enabled"]):
            if expr is not None:
                names |= expr.names
        names.update(v for v in (self.switch, self.var, self.on_input) if v)
        if isinstance(self.checked, str):
            names.add(self.checked)
        return names


class Screen(_Model):
    """A page (full screen) or a dialog (drawn over the screen that opened it)."""

    id: str
    kind: Literal["page", "dialog"] = "page"
    #: activity class, ".Name" is relative to the package; omitted -> app.default_activity
    activity: Optional[str] = None
    title: str = ""
    #: pages: draw a toolbar with the title (and a back arrow)
    toolbar: bool = True
    back_arrow: bool = True
    #: dialogs: body text under the title
    message: Optional[str] = None
    nodes: list[Node] = Field(default_factory=list)
    #: dialogs: the button bar (Cancel / OK), right-aligned
    buttons: list[Node] = Field(default_factory=list)
    #: effects run every time the screen is opened (e.g. collapse an "Advanced" section)
    on_enter: list[Effect] = Field(default_factory=list)
    #: what the back key does here; omitted -> pop the screen
    back: Optional[list[Effect]] = None
    #: dialogs: a tap outside the dialog or back dismisses it
    cancelable: bool = True
    #: owning package; omitted -> the world's app (launcher stub apps set their own)
    package: Optional[str] = None
    #: where the screen's content comes from when not from the app's resources (imported worlds)
    source: str = ""

    _title_tpl: Optional[Template] = PrivateAttr(None)
    _message_tpl: Optional[Template] = PrivateAttr(None)


# ------------------------------------------------------------ app / device

class AppSpec(_Model):
    package: str
    label: str
    #: versionName as `dumpsys package` reports it
    version: str
    version_code: Optional[int] = None
    launch_activity: str = ".MainActivity"
    #: activity of screens that name none; omitted -> launch_activity
    default_activity: Optional[str] = None
    #: the screen the app opens on; omitted -> the first page
    launch_screen: Optional[str] = None


class LauncherApp(_Model):
    """An icon on the home screen of an app the world does not model (opens a blank page)."""

    label: str
    package: str
    version: str = "1.0"
    #: an icon on the home screen too (every installed app is in the app drawer)
    home: bool = True


def _default_launcher_apps() -> list[LauncherApp]:
    return [
        LauncherApp(label="Phone", package="com.google.android.dialer", version="101.0"),
        LauncherApp(label="Messages", package="com.google.android.apps.messaging", version="20230601"),
        LauncherApp(label="Chrome", package="com.android.chrome", version="114.0.5735.196"),
        LauncherApp(label="Camera", package="com.google.android.GoogleCamera", version="8.9.097"),
        LauncherApp(label="Play Store", package="com.android.vending", version="36.3.13"),
        LauncherApp(label="Photos", package="com.google.android.apps.photos", version="6.41.0"),
    ]


class QuickTile(_Model):
    """A quick settings tile in the panel a swipe down from the top edge opens."""

    label: str
    #: the bool state variable it toggles: the same one as the app's switch for that setting
    var: str
    #: a page of the world's app that a long press on the tile opens (as a phone opens the setting)
    screen: Optional[str] = None


class DeviceSpec(_Model):
    manufacturer: str = "Google"
    model: str = "Pixel 6"
    #: Android release, e.g. "13"
    os_version: str = "13"
    sdk: int = 33
    width: int = Field(1080, ge=320)
    height: int = Field(2400, ge=480)
    #: dots per inch; 1 dp = density / 160 pixels
    density: int = Field(420, ge=120)
    #: gesture bar (thin) or three-button bar (Android 9)
    navigation: Literal["gesture", "buttons"] = "gesture"
    launcher_package: str = "com.google.android.apps.nexuslauncher"
    launcher_apps: list[LauncherApp] = Field(default_factory=_default_launcher_apps)
    #: quick settings tiles (Wi-Fi, Bluetooth, ...); none by default
    quick_settings: list[QuickTile] = Field(default_factory=list)


class StyleSpec(_Model):
    """Resource ids and classes that differ between apps and Android versions."""

    toolbar_id: str = "{package}:id/action_bar"
    list_id: str = "{package}:id/recycler_view"
    list_class: str = "androidx.recyclerview.widget.RecyclerView"
    switch_id: str = "android:id/switch_widget"
    #: Android <= 10 Switches report text "ON"/"OFF" in dumps
    switch_text: bool = False
    #: accent colour of the PNG render (#rrggbb)
    accent: str = "#1a73e8"
    dark: bool = False


class Goal(_Model):
    """A labelling predicate. NEVER shown to the agent, the judge or features."""

    expr: str
    #: the How-to question this goal answers
    query: str = ""
    description: str = ""

    _compiled: Optional[Expr] = PrivateAttr(None)

    @model_validator(mode="before")
    @classmethod
    def _bare_expr(cls, data: object) -> object:
        return {"expr": data} if isinstance(data, str) else data


class World(_Model):
    #: defaults to the file name without extension
    name: str = ""
    description: str = ""
    app: AppSpec
    device: DeviceSpec = Field(default_factory=DeviceSpec)
    style: StyleSpec = Field(default_factory=StyleSpec)
    state: dict[str, VarSpec] = Field(default_factory=dict)
    screens: list[Screen]
    goals: dict[str, Goal] = Field(default_factory=dict)

    _source: str = PrivateAttr("<memory>")
    _screens: dict[str, Screen] = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> str:
        return self._source

    def screen(self, screen_id: str) -> Screen:
        return self._screens[screen_id]

    @property
    def launch_screen(self) -> str:
        return self.app.launch_screen or next(s.id for s in self.screens if s.kind == "page")

    def activity_of(self, screen: Screen) -> str:
        """Fully qualified activity class of ``screen``."""
        if screen.activity:
            name = screen.activity
        elif screen.id == self.launch_screen or screen.package not in (None, self.app.package):
            name = self.app.launch_activity if screen.package in (None, self.app.package) else ".MainActivity"
        else:
            name = self.app.default_activity or self.app.launch_activity
        package = screen.package or self.app.package
        return package + name if name.startswith(".") else name

    def initial_state(self) -> dict[str, Value]:
        return {name: spec.initial for name, spec in self.state.items()}

    def goal(self, name: str) -> Goal:
        try:
            return self.goals[name]
        except KeyError:
            raise WorldError(f"{self._source}: no goal named {name!r} (goals: {', '.join(self.goals)})") from None


Node.model_rebuild()


# ------------------------------------------------------------------ loading

def resolve_world(name_or_path: Union[str, Path]) -> Path:
    """A bundled world name (``android13-settings``) or a world file, with or without its suffix.

    Tried in order: the path itself when it ends in .yaml/.yml/.json; a
    bundled world of that name; the path with .json/.yaml/.yml added; the
    path itself (a world file named without a suffix, as ``verirank worlds
    import-apk --out PATH`` may have been given).
    """
    path = Path(name_or_path).expanduser()
    if path.suffix in _WORLD_SUFFIXES and path.is_file():
        return path
    for ext in _WORLD_SUFFIXES:
        candidate = WORLDS_DIR / f"{name_or_path}{ext}"
        if candidate.is_file():
            return candidate
    for ext in (".json", ".yaml", ".yml"):
        candidate = path.with_name(path.name + ext)
        if path.name and candidate.is_file():
            return candidate
    if path.is_file():
        return path
    if path.is_dir():
        inside = sorted(str(p) for p in path.iterdir() if p.suffix in _WORLD_SUFFIXES and p.is_file())
        hint = f"; its world files: {', '.join(inside[:5])}" if inside else " with no world files"
        raise WorldError(f"{path} is a folder{hint}")
    known = ", ".join(list_worlds()) or "none"
    raise WorldError(f"no world {str(name_or_path)!r}: not a world file and not a bundled world ({known})")


_WORLD_SUFFIXES = (".yaml", ".yml", ".json")

#: libyaml's safe loader when PyYAML was built with it: eight times faster, and every
#: worker process loads its world before its first page
_YAML_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def list_worlds() -> list[str]:
    """Names of the bundled worlds."""
    if not WORLDS_DIR.is_dir():
        return []
    return sorted(p.stem for p in WORLDS_DIR.iterdir() if p.suffix in (".yaml", ".yml", ".json"))


def load_world(name_or_path: Union[str, Path]) -> World:
    """Read, validate and compile a world file (see :func:`resolve_world`)."""
    path = resolve_world(name_or_path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise WorldError(f"{path}: cannot read world file ({exc})") from exc
    # a file named without a suffix is JSON when it looks like JSON (the importers write JSON)
    is_json = path.suffix == ".json" or (path.suffix not in _WORLD_SUFFIXES and text.lstrip().startswith("{"))
    try:
        data = json.loads(text) if is_json else yaml.load(text, Loader=_YAML_LOADER)
    except (yaml.YAMLError, json.JSONDecodeError) as exc:
        raise WorldError(f"{path}: not valid {'JSON' if is_json else 'YAML'}: {exc}") from exc
    world = parse_world(data, source=str(path))
    if not world.name:
        world.name = path.stem
    return world


def parse_world(data: object, source: str = "<memory>") -> World:
    """Validate a world document already parsed into Python objects."""
    if not isinstance(data, dict):
        raise WorldError(f"{source}: a world is a mapping with app, screens, ... (got {type(data).__name__})")
    try:
        world = World.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors()[:10]:
            where = _format_loc(err["loc"], data)
            hint = ""
            if err["type"] == "string_type" and isinstance(err.get("input"), bool):
                hint = " (YAML reads unquoted On/Off/Yes/No as true/false: quote the text)"
            problems.append(f"{where}: {err['msg']}{hint}")
        more = f" (and {exc.error_count() - 10} more)" if exc.error_count() > 10 else ""
        raise WorldError(f"{source}: invalid world: " + "; ".join(problems) + more) from exc
    world._source = source
    _Checker(world, source).run()
    return world


def _format_loc(loc: tuple, data: object) -> str:
    """``('screens', 2, 'nodes', 0, 'kind')`` -> ``screens[2] ('display').nodes[0].kind``."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            node = node[part] if isinstance(node, list) and part < len(node) else None
            out += f"[{part}]"
            if out.startswith("screens[") and out.count("[") == 1 and isinstance(node, dict):
                out += f" ({node.get('id')!r})"
        elif "[" in part or part.startswith("function-"):
            continue  # pydantic's validator tags mean nothing to a reader
        else:
            out += ("." if out else "") + part
            node = node.get(part) if isinstance(node, dict) else None
    return out or "<document>"


class _Checker:
    """Cross-reference checks pydantic cannot do; compiles expressions and templates."""

    def __init__(self, world: World, source: str):
        self.world = world
        self.source = source
        self.errors: list[str] = []
        self.packages = {world.app.package} | {a.package for a in world.device.launcher_apps}

    def fail(self, where: str, message: str) -> None:
        self.errors.append(f"{where}: {message}")

    def run(self) -> None:
        world = self.world
        for i, screen in enumerate(world.screens):
            if screen.id in world._screens:
                self.fail(f"screens[{i}].id", f"duplicate screen id {screen.id!r}")
            world._screens[screen.id] = screen
        launch = world.app.launch_screen
        if launch is not None and launch not in world._screens:
            self.fail("app.launch_screen", self.unknown_screen(launch))
        elif launch is not None and world._screens[launch].kind != "page":
            self.fail("app.launch_screen", f"{launch!r} is a dialog; the app must open on a page")
        if not any(s.kind == "page" for s in world.screens):
            self.fail("screens", "a world needs at least one page")
        for i, screen in enumerate(world.screens):
            where = f"screens[{i}] ({screen.id!r})"
            screen._title_tpl = self.template(f"{where}.title", screen.title)
            if screen.message is not None:
                screen._message_tpl = self.template(f"{where}.message", screen.message)
            self.effects(f"{where}.on_enter", screen.on_enter)
            if screen.back is not None:
                self.effects(f"{where}.back", screen.back)
            if screen.kind == "page" and screen.buttons:
                self.fail(f"{where}.buttons", "only dialogs have a button bar; put Buttons in nodes")
            for j, node in enumerate(screen.nodes):
                self.node(f"{where}.nodes[{j}]", node, screen)
            for j, node in enumerate(screen.buttons):
                self.node(f"{where}.buttons[{j}]", node, screen)
        for i, tile in enumerate(world.device.quick_settings):
            where = f"device.quick_settings[{i}] ({tile.label!r})"
            self.var(f"{where}.var", tile.var, ("bool",))
            if tile.screen is not None and (tile.screen not in world._screens
                                            or world._screens[tile.screen].kind != "page"):
                self.fail(f"{where}.screen", self.unknown_screen(tile.screen))
        for name, goal in world.goals.items():
            try:
                goal._compiled = compile_expr(goal.expr, world.state)
            except ExprError as exc:
                self.fail(f"goals.{name}.expr", f"bad expression {goal.expr!r}: {exc}")
        if self.errors:
            shown = "; ".join(self.errors[:10])
            more = f" (and {len(self.errors) - 10} more)" if len(self.errors) > 10 else ""
            raise WorldError(f"{self.source}: invalid world: {shown}{more}")

    def unknown_screen(self, name: str) -> str:
        return f"unknown screen {name!r} (screens: {', '.join(self.world._screens)})"

    def var(self, where: str, name: str, types: tuple[str, ...]) -> None:
        spec = self.world.state.get(name)
        if spec is None:
            known = ", ".join(self.world.state) or "none"
            self.fail(where, f"unknown variable {name!r} (state variables: {known})")
        elif spec.type not in types:
            self.fail(where, f"{name!r} is a {spec.type} variable; expected {' or '.join(types)}")

    def template(self, where: str, text: Optional[str]) -> Optional[Template]:
        if text is None:
            return None
        try:
            return compile_template(text, self.world.state)
        except ExprError as exc:
            self.fail(where, str(exc))
            return None

    def expression(self, where: str, src: str) -> Optional[Expr]:
        try:
            return compile_expr(src, self.world.state)
        except ExprError as exc:
            self.fail(where, f"bad expression {src!r}: {exc}")
            return None

    def effects(self, where: str, effects: list[Effect]) -> None:
        for k, eff in enumerate(effects):
            at = f"{where}[{k}]"
            screens = self.world._screens
            if eff.goto is not None:
                if eff.goto not in screens:
                    self.fail(f"{at}.goto", self.unknown_screen(eff.goto))
                elif screens[eff.goto].kind != "page":
                    self.fail(f"{at}.goto", f"{eff.goto!r} is a dialog; open it with `dialog:`")
            if eff.dialog is not None:
                if eff.dialog not in screens:
                    self.fail(f"{at}.dialog", self.unknown_screen(eff.dialog))
                elif screens[eff.dialog].kind != "dialog":
                    self.fail(f"{at}.dialog", f"{eff.dialog!r} is a page; open it with `goto:`")
            if eff.toggle is not None:
                self.var(f"{at}.toggle", eff.toggle, ("bool",))
            for field_name in ("inc", "dec"):
                name = getattr(eff, field_name)
                if name is not None:
                    self.var(f"{at}.{field_name}", name, ("int", "choice"))
            if eff.set is not None:
                for name, value in eff.set.items():
                    spec = self.world.state.get(name)
                    if spec is None:
                        self.var(f"{at}.set.{name}", name, ("bool", "choice", "text", "int"))
                        continue
                    problem = value_problem(spec, value)
                    if problem:
                        self.fail(f"{at}.set.{name}", problem)
            for target, origin in (eff.copy_ or {}).items():
                self.var(f"{at}.copy.{target}", target, ("bool", "choice", "text", "int"))
                self.var(f"{at}.copy.{target}", origin, ("bool", "choice", "text", "int"))
                a, b = self.world.state.get(target), self.world.state.get(origin)
                if a is not None and b is not None and (a.type != b.type or a.options != b.options):
                    self.fail(f"{at}.copy.{target}", f"cannot copy {origin!r} ({b.type}) into {target!r} ({a.type})")
            if eff.launch is not None and eff.launch not in self.packages:
                self.fail(f"{at}.launch", f"package {eff.launch!r} is not installed in this world "
                                          f"(installed: {', '.join(sorted(self.packages))})")

    def node(self, where: str, node: Node, screen: Screen) -> None:
        node._path = where  # unique per world and stable across runs: names the focused field
        for field_name in TEMPLATE_FIELDS:
            tpl = self.template(f"{where}.{field_name}", getattr(node, field_name))
            if tpl is not None and tpl.names:
                node._tpl[field_name] = tpl
        if node.visible_if is not None:
            node._visible = self.expression(f"{where}.visible_if", node.visible_if)
        if node.enabled_if is not None:
            node._enabled = self.expression(f"{where}.enabled_if", node.enabled_if)
        if isinstance(node.checked, str):
            self.var(f"{where}.checked", node.checked, ("bool",))
        if node.switch is not None:
            self.var(f"{where}.switch", node.switch, ("bool",))
        if node.split and (node.switch is None or not node.on_click):
            self.fail(f"{where}.split", "a split row needs both `switch` and `on_click`")
        kind = node.kind
        if kind in ("radio", "choices", "slider", "checkbox") and node.var is None:
            self.fail(f"{where}.var", f"a {kind} needs `var`")
        if node.var is not None:
            types = {"radio": ("choice", "bool", "int", "text"), "choices": ("choice",),
                     "slider": ("choice", "int"), "checkbox": ("bool",)}.get(kind, ("bool", "choice", "int", "text"))
            self.var(f"{where}.var", node.var, types)
            spec = self.world.state.get(node.var)
            if kind == "radio" and spec is not None and spec.type in types:
                if node.value is None:
                    self.fail(f"{where}.value", "a radio needs the `value` it selects")
                else:
                    problem = value_problem(spec, node.value)
                    if problem:
                        self.fail(f"{where}.value", problem)
        if node.on_input is not None:
            if kind != "edit":
                self.fail(f"{where}.on_input", "only an edit node takes text input")
            self.var(f"{where}.on_input", node.on_input, ("text",))
        if kind == "edit" and node.on_input is None:
            self.fail(f"{where}.on_input", "an edit node needs `on_input: VAR` (a text variable)")
        self.effects(f"{where}.on_click", node.on_click)
        self.effects(f"{where}.on_long_press", node.on_long_press)
        self.effects(f"{where}.on_enter", node.on_enter)
        if kind in ("row", "header", "text", "edit", "button", "icon_button", "radio", "checkbox",
                    "choices", "slider", "image") and node.children:
            self.fail(f"{where}.children", f"a {kind} has no children; use a group, bar or view")
        for j, child in enumerate(node.children):
            self.node(f"{where}.children[{j}]", child, screen)
