"""The execution proxy: verification, fallbacks, re-location, recorded failures."""

from __future__ import annotations

import time

from support_screens import Screen, ScriptedScreenDevice, row_bounds

from verirank_core.execution_config import ExecutionConfig
from execution.predict.base import Prediction
from execution.proxy import ExecutionProxy, relocate
from verirank_core.execution_records import Action, ActionType
from phonesim.device import SimDevice
from execution.uicontext import UIContext


def _click(ui: UIContext, label: str) -> Prediction:
    c = next(c for c in ui.controls if c.label == label)
    x, y = c.center
    return Prediction(Action(type=ActionType.CLICK, x=x, y=y, target_label=c.label), 0, advance=True,
                      control_id=c.id)


def _observe(dev) -> UIContext:
    return UIContext.from_xml(dev.dump_xml(), dev.screen_size())


def test_click_that_changes_the_screen_needs_no_fallback():
    dev = ScriptedScreenDevice({"main": Screen("Settings", [{"title": "Display"}],
                                               on_tap={"Display": lambda d: d.go("display")}),
                                "display": Screen("Display", [{"title": "Dark theme"}])}, "main")
    ui = _observe(dev)
    out = ExecutionProxy().execute(dev, _click(ui, "Display"), ui)
    assert out.ok and out.changed and out.fallback is None and out.failure_reason is None
    assert [a["method"] for a in out.attempts] == ["click"]
    assert out.after_ui is not None and out.after_ui.title == "Display"
    assert out.device_ms > 0


def test_falls_back_to_the_label_centre_then_records_it():
    # the row reacts only to taps on its text, not on its centre
    dev = ScriptedScreenDevice({"main": Screen("Settings", [{"title": "Display"}],
                                               on_tap={"Display": lambda d: d.go("display")},
                                               text_only={"Display"}),
                                "display": Screen("Display", [])}, "main")
    ui = _observe(dev)
    out = ExecutionProxy().execute(dev, _click(ui, "Display"), ui)
    assert out.ok and out.fallback == "tap_center"
    assert out.attempts[0] == {"method": "click", "ok": False, "reason": "screen did not change"}
    taps = [c for c in dev.calls if c[0] == "tap"]
    assert len(taps) == 2 and taps[0][1:] != taps[1][1:]


def test_every_failed_method_is_recorded_when_nothing_works():
    dev = ScriptedScreenDevice({"main": Screen("Settings", [{"title": "Dead row"}])}, "main")
    ui = _observe(dev)
    out = ExecutionProxy().execute(dev, _click(ui, "Dead row"), ui)
    assert not out.ok
    assert [a["method"] for a in out.attempts] == ["click", "tap_center", "long_press"]
    assert all(not a["ok"] for a in out.attempts)
    assert out.failure_reason == "long_press: screen did not change"
    assert ("long_press", 540, 400) in dev.calls


def test_stale_observation_relocates_the_moved_target():
    screen = Screen("Settings", [{"title": "Network"}, {"title": "Display"}],
                    on_tap={"Display": lambda d: d.go("display")})
    dev = ScriptedScreenDevice({"main": screen, "display": Screen("Display", [])}, "main")
    ui = _observe(dev)
    pred = _click(ui, "Display")
    screen.rows.insert(0, {"title": "Banner"})  # the list moved down by one row after we looked
    out = ExecutionProxy(stale_ms=0).execute(dev, pred, ui, observed_at=time.perf_counter() - 1)
    assert out.ok and out.relocated
    x1, y1, x2, y2 = row_bounds(2)
    assert out.action.y == (y1 + y2) // 2
    assert pred.action.y != out.action.y  # the prediction itself is not mutated


def test_vanished_target_fails_with_a_reason():
    screen = Screen("Settings", [{"title": "Display"}])
    dev = ScriptedScreenDevice({"main": screen}, "main")
    ui = _observe(dev)
    pred = _click(ui, "Display")
    screen.rows[:] = [{"title": "Something else entirely"}, {"title": "Other"}, {"title": "More"}]
    screen.rows[0]["switch"] = True  # a different role at the same place
    out = ExecutionProxy(stale_ms=0).execute(dev, pred, ui, observed_at=time.perf_counter() - 1)
    assert not out.ok and "no longer on screen" in out.failure_reason
    assert not any(c[0] == "tap" for c in dev.calls)


def test_relocate_prefers_label_and_id():
    a = UIContext.from_xml(ScriptedScreenDevice({"m": Screen("S", [{"title": "A"}, {"title": "B"}])}, "m").dump_xml())
    b = UIContext.from_xml(ScriptedScreenDevice({"m": Screen("S", [{"title": "B"}, {"title": "A"}])}, "m").dump_xml())
    moved = relocate(next(c for c in a.controls if c.label == "B"), b)
    assert moved is not None and moved.label == "B" and moved.bounds == row_bounds(0)


def test_noop_sends_nothing_and_unverified_mode_skips_the_dump():
    dev = ScriptedScreenDevice({"main": Screen("Settings", [{"title": "Display"}])}, "main")
    ui = _observe(dev)
    n = len(dev.calls)
    out = ExecutionProxy().execute(dev, Prediction(Action(type=ActionType.WAIT), 0, True, noop=True), ui)
    assert out.ok and len(dev.calls) == n
    out2 = ExecutionProxy(verify_change=False).execute(dev, _click(ui, "Display"), ui)
    assert out2.ok and out2.after_xml is None
    assert [c[0] for c in dev.calls[n:]] == ["tap"]


def test_input_is_verified_by_the_typed_text_on_a_simulator():
    dev = SimDevice.open("oneui5-settings")
    dev.reset("com.android.settings")
    ui = _observe(dev)
    # no edit field on the main screen: typing cannot show up anywhere
    pred = Prediction(Action(type=ActionType.INPUT, text="zzqx"), 0, True, expect_change=True)
    out = ExecutionProxy().execute(dev, pred, ui)
    assert not out.ok and "does not appear" in out.failure_reason


def test_key_and_swipe_on_a_simulator():
    dev = SimDevice.open("oneui5-settings")
    dev.reset("com.android.settings")
    ui = _observe(dev)
    scroller = max((c for c in ui.controls if "swipe_down" in c.actions),
                   key=lambda c: (c.bounds[2] - c.bounds[0]) * (c.bounds[3] - c.bounds[1]))
    x = scroller.center[0]
    y1, y2 = scroller.bounds[1], scroller.bounds[3]
    swipe = Prediction(Action(type=ActionType.SWIPE, x=x, y=y2 - 200, x2=x, y2=y1 + 200), 0, False,
                       expect_change=False)
    out = ExecutionProxy().execute(dev, swipe, ui)
    assert out.ok and out.changed  # the list moved
    up = Prediction(Action(type=ActionType.SWIPE, x=x, y=y1 + 200, x2=x, y2=y2 - 200), 0, False,
                    expect_change=False)
    out = ExecutionProxy().execute(dev, up, out.after_ui)
    assert out.ok and out.changed and out.after_ui.signature == ui.signature  # back at the top
    out2 = ExecutionProxy().execute(dev, _click(out.after_ui, "Display"), out.after_ui)
    assert out2.ok and out2.after_ui.title == "Display"
    back = ExecutionProxy().execute(dev, Prediction(Action(type=ActionType.BACK), 0, True), out2.after_ui)
    assert back.ok and back.after_ui.title == "Settings"


def test_from_config():
    cfg = ExecutionConfig.model_validate({"agent": {"proxy": {"fallbacks": ["long_press"], "settle_ms": 5}}})
    proxy = ExecutionProxy.from_config(cfg)
    assert tuple(proxy.fallbacks) == ("long_press",) and proxy.settle_ms == 5


def test_launching_an_app_the_device_lacks_fails_the_action_not_the_device():
    dev = SimDevice.open("video-app")
    dev.reset("com.tubeview.android")
    ui = _observe(dev)
    launch = Prediction(action=Action(type=ActionType.LAUNCH, package="com.android.settings"), step_index=0,
                        advance=True, expect_change=True)
    out = ExecutionProxy().execute(dev, launch, ui)
    assert not out.ok
    assert "com.android.settings" in out.failure_reason and "not installed" in out.failure_reason
    assert out.attempts == [{"method": "launch", "ok": False, "reason": out.failure_reason}]
    # the device is still usable for the next step
    assert dev.current_app().package == "com.tubeview.android"
