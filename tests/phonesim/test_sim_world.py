"""World files: validation errors name the file and the place; the expression language."""

from __future__ import annotations

import pytest
import support_sim

from phonesim.expr import ExprError, compile_expr, compile_template
from phonesim.world import list_worlds, load_world, parse_world, resolve_world
from verirank_core.errors import VerirankError, WorldError


def _load(tmp_path, data):
    return load_world(support_sim.write_world(tmp_path, data))


def test_mini_world_loads_and_compiles(tmp_path):
    world = _load(tmp_path, support_sim.mini_world())
    assert world.name == "mini"
    assert world.launch_screen == "main"
    assert world.initial_state()["timeout"] == "30 seconds"
    assert world.initial_state()["dark"] is False
    assert world.activity_of(world.screen("main")) == "com.example.settings.Main"
    assert world.activity_of(world.screen("display")) == "com.example.settings.Sub"


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda d: d["screens"][0]["nodes"][0]["on_click"][0].update(goto="dispaly"),
         "screens[0] ('main').nodes[0].on_click[0].goto: unknown screen 'dispaly'"),
        (lambda d: d["screens"][1]["nodes"][1].update(switch="drak"),
         "screens[1] ('display').nodes[1].switch: unknown variable 'drak'"),
        (lambda d: d["screens"][0]["nodes"][4].update(visible_if="taps >="),
         "screens[0] ('main').nodes[4].visible_if: bad expression 'taps >='"),
        (lambda d: d["goals"].update(bad="timeout == '10 minute'"),
         "goals.bad.expr: bad expression \"timeout == '10 minute'\": '10 minute' is not an option of timeout"),
        (lambda d: d["screens"][0]["nodes"][0]["on_click"][0].update(goto="timeout_dialog"),
         "'timeout_dialog' is a dialog; open it with `dialog:`"),
        (lambda d: d["screens"].append({"id": "main", "title": "again"}),
         "screens[8].id: duplicate screen id 'main'"),
        (lambda d: d["screens"][6]["nodes"][0].pop("on_input"),
         "screens[6] ('rename').nodes[0].on_input: an edit node needs `on_input: VAR`"),
        (lambda d: d["screens"][1]["nodes"][0].update(on_click=[{"set": {"timeout": "2 hours"}}]),
         "on_click[0].set.timeout: '2 hours' is not one of the options"),
        (lambda d: d["screens"][1]["nodes"][1].update(summary=True),
         "screens[1] ('display').nodes[1].summary: Input should be a valid string (YAML reads unquoted On/Off"),
        (lambda d: d["screens"][1]["nodes"][1].update(colour="red"),
         "screens[1] ('display').nodes[1].colour: Extra inputs are not permitted"),
        (lambda d: d["screens"][0]["nodes"][0].update(on_click=[{"goto": "display", "back": True}]),
         "an effect has exactly one of"),
        (lambda d: d["screens"][0]["nodes"][1].update(summary="{wifi?On}"),
         "malformed placeholder"),
        (lambda d: d["state"]["timeout"].update(initial="2 hours"),
         "state.timeout: Value error, initial value: '2 hours' is not one of the options"),
    ],
)
def test_invalid_worlds_say_what_and_where(tmp_path, mutate, expected):
    data = support_sim.mini_world()
    mutate(data)
    with pytest.raises(WorldError) as info:
        _load(tmp_path, data)
    message = str(info.value)
    assert str(tmp_path / "mini.yaml") in message
    assert expected in message


def test_several_problems_are_reported_together(tmp_path):
    data = support_sim.mini_world()
    data["screens"][0]["nodes"][0]["on_click"] = [{"goto": "nowhere"}]
    data["screens"][1]["nodes"][1]["switch"] = "nothing"
    with pytest.raises(WorldError) as info:
        _load(tmp_path, data)
    assert "nowhere" in str(info.value) and "nothing" in str(info.value)


def test_bad_yaml_and_missing_world(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("app: [unclosed\n")
    with pytest.raises(WorldError, match="broken.yaml: not valid YAML"):
        load_world(path)
    with pytest.raises(WorldError, match="no world 'no-such-world'.*android13-settings"):
        load_world("no-such-world")
    with pytest.raises(WorldError, match="a world is a mapping"):
        parse_world(["not", "a", "mapping"])


def test_world_errors_are_verirank_errors():
    assert issubclass(WorldError, VerirankError)


def test_bundled_names_resolve(repo_root):
    names = list_worlds()
    for required in ("android13-settings", "android9-settings", "video-app", "maps-app"):
        assert required in names
        assert resolve_world(required).parent == repo_root / "datasets" / "worlds"


# ------------------------------------------------------------- expressions

STATE = {"dark": True, "wifi": False, "timeout": "1 minute", "taps": 4, "name": "Work Phone"}


@pytest.mark.parametrize(
    "src, expected",
    [
        ("dark", True),
        ("dark == true", True),
        ("wifi != false", False),
        ("not wifi", True),
        ("dark and wifi", False),
        ("dark or wifi", True),
        ("not dark or wifi", False),  # not binds tighter than or
        ("dark and (wifi or taps >= 4)", True),
        ("timeout == '1 minute'", True),
        ('timeout == "30 seconds"', False),
        ("taps > 3 and taps < 5 and taps <= 4 and taps >= 4", True),
        ("name contains 'work'", True),
        ("name contains 'home'", False),
        ("false or not false", True),
    ],
)
def test_expressions_evaluate(src, expected):
    assert compile_expr(src).evaluate(STATE) is expected


def test_expression_names_and_no_eval():
    expr = compile_expr("dark and timeout == '1 minute'")
    assert expr.names == {"dark", "timeout"}
    for bad in ("__import__('os')", "dark == ", "(dark", "dark dark", "1 +", ""):
        with pytest.raises(ExprError):
            compile_expr(bad)


def test_templates():
    assert compile_template("After {timeout} of inactivity").render(STATE) == "After 1 minute of inactivity"
    assert compile_template("{dark?On:Off} / {wifi?yes:no}").render(STATE) == "On / no"
    assert compile_template("{name|Not set}").render({"name": ""}) == "Not set"
    assert compile_template("{name|Not set}").render({"name": "Mine"}) == "Mine"
    assert compile_template("{dark}").render(STATE) == "On"
    assert compile_template("no placeholders").names == frozenset()
    with pytest.raises(ExprError, match="unknown variable 'nope'"):
        compile_template("{nope}", {"dark": object()})
