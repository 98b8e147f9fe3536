"""The LLM predictor and LLM judge through the real openai client against a scripted stub server."""

from __future__ import annotations

import json
import re

import pytest
from support_scripted_llm import ScriptedLLMServer
from support_screens import settings_xml

from execution.agent import run_episode
from verirank_core.execution_config import ExecutionConfig
from execution.judge import LLMJudge
from execution.predict import PredictContext, make_predictor
from execution.predict.llm import ACTION_SCHEMA, LLMPredictor
from verirank_core.execution_records import ActionType, StopReason
from phonesim.device import SimDevice
from execution.uicontext import UIContext
from verirank_core.errors import LLMOutputError
from verirank_core.llm import LLMClient

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 16


@pytest.fixture()
def server():
    with ScriptedLLMServer() as s:
        yield s


def _client(server, retries: int = 2) -> LLMClient:
    return LLMClient(base_url=server.base_url, model="stub-model", api_key="k", max_retries=retries, cache=None)


def _reply(action="click", control_id=None, text=None, direction=None, step_index=0, step_done=True, reason="r"):
    return json.dumps({"action": action, "control_id": control_id, "text": text, "direction": direction,
                       "step_index": step_index, "step_done": step_done, "reason": reason})


def _ctx(rows, steps, **kw) -> PredictContext:
    ui = UIContext.from_xml(settings_xml("Settings", rows))
    return PredictContext(instructions=steps, step_index=0, ui=ui, memory={}, _screenshot_fn=lambda: PNG, **kw)


def _user_text(body: dict) -> str:
    user = body["messages"][1]["content"]
    return "\n".join(p["text"] for p in user if p.get("type") == "text") if isinstance(user, list) else user


def test_reply_becomes_a_prediction_and_the_request_carries_the_context(server):
    ctx = _ctx([{"title": "Network"}, {"title": "Display"}], ["Tap Display"],
               extra={"credentials": {"email": "a@b.c"}}, previous_screenshots=[PNG, PNG, PNG])
    display = next(c for c in ctx.ui.controls if c.label == "Display")
    server.script([_reply(control_id=display.id, reason="Display is the target")])
    pred = LLMPredictor(_client(server)).predict(ctx)
    assert pred.action.type == ActionType.CLICK and pred.action.target_label == "Display"
    assert (pred.action.x, pred.action.y) == display.center and pred.advance and pred.control_id == display.id
    assert pred.model_ms > 0
    body = server.requests[0]
    assert body["temperature"] == 0.3
    assert body.get("max_tokens", body.get("max_completion_tokens")) == 300
    text = _user_text(body)
    assert '"label": "Display"' in text and "0. Tap Display" in text and "a@b.c" in text
    images = [p for p in body["messages"][1]["content"] if p.get("type") == "image_url"]
    assert len(images) == 3  # two earlier screenshots (bounded) + the current one
    assert images[-1]["image_url"]["url"].startswith("data:image/png;base64,")


def test_malformed_json_is_rejected_and_retried(server):
    ctx = _ctx([{"title": "Display"}], ["Tap Display"])
    server.script(["Sure! I will tap {Display", _reply(action="fly", control_id=1), _reply(control_id=1)])
    pred = LLMPredictor(_client(server)).predict(ctx)
    assert pred.action.target_label == "Display"
    assert len(server.requests) == 3
    # the corrective turn tells the model what was wrong
    last = server.requests[2]["messages"]
    assert last[-1]["role"] == "user" and "not valid" in last[-1]["content"]


def test_output_that_never_validates_raises(server):
    ctx = _ctx([{"title": "Display"}], ["Tap Display"])
    server.script(["nope"] * 3)
    with pytest.raises(LLMOutputError):
        LLMPredictor(_client(server, retries=2)).predict(ctx)
    assert len(server.requests) == 3


def test_impossible_replies_mean_no_action(server):
    ctx = _ctx([{"title": "Display"}], ["Tap Display"])
    server.script([_reply(control_id=42), _reply(action="none", reason="nothing matches")])
    p = LLMPredictor(_client(server), send_screenshot=False)
    assert p.predict(ctx) is None and "control 42" in ctx.stuck_reason
    assert p.predict(ctx) is None and "nothing matches" in ctx.stuck_reason
    assert not any(part.get("type") == "image_url" for part in server.requests[0]["messages"][1]["content"])


def test_done_input_and_swipe_replies(server):
    ctx = _ctx([{"title": "Search", "edit": ""}, {"title": "Display", "switch": True}], ["Turn on Display"])
    server.script([_reply(action="done"), _reply(action="input", control_id=0, text="pizza"),
                   _reply(action="swipe", direction="down", step_done=False)])
    p = LLMPredictor(_client(server))
    done = p.predict(ctx)
    assert done.noop and done.advance and done.action.type == ActionType.WAIT
    typed = p.predict(ctx)
    assert typed.action.type == ActionType.INPUT and typed.action.text == "pizza"
    swipe = p.predict(ctx)
    assert swipe.action.type == ActionType.SWIPE and swipe.action.y > swipe.action.y2 and not swipe.advance


def _toy_model(body: dict) -> str:
    """A stand-in 'model': picks the control whose label the current step names."""
    text = _user_text(body)
    steps = re.findall(r"^(\d+)\. (.*)$", text, re.M)
    current = int(re.search(r"Current step: (\d+)", text).group(1))
    step = dict(steps)[str(current)]
    screen = json.loads(re.search(r"Screen:\n(\{.*\})", text).group(1))
    if step.startswith("Open Settings"):
        return _reply(action="done", step_index=current)
    named = [c for c in screen["controls"] if c["label"] and c["label"].lower() in step.lower()]
    if not named:
        return _reply(action="none", step_index=current, step_done=False, reason="not here")
    wants_switch = step.lower().startswith("turn")
    best = max(named, key=lambda c: (len(c["label"]), wants_switch and "checked" in c))
    return _reply(control_id=best["id"], step_index=current)


def test_llm_predictor_drives_a_simulator_episode():
    with ScriptedLLMServer(responder=_toy_model) as server:
        dev = SimDevice.open("oneui5-settings")
        cfg = ExecutionConfig(predictor="llm")
        predictor = make_predictor(cfg, llm_client=_client(server))
        traj = run_episode(["Open Settings", "Tap Connections", "Turn on Bluetooth"], predictor, dev,
                           qid="q", url="u", app="com.android.settings")
        assert traj.stop_reason == StopReason.COMPLETED and traj.predictor == "llm"
        assert dev.simulator.goal_satisfied("bluetooth_on")  # label, tests only
        assert len(server.requests) == 3
        # real screenshots of the simulator were sent
        assert any(p.get("type") == "image_url" for p in server.requests[1]["messages"][1]["content"])


def test_llm_judge_scores_and_retries(server, tmp_path):
    dev = SimDevice.open("oneui5-settings")
    from execution.predict import HeuristicPredictor

    traj = run_episode(["Open Settings", "Tap Connections"], HeuristicPredictor(use_embeddings=False), dev,
                       qid="q", url="u", app="com.android.settings", out_dir=tmp_path)
    good = json.dumps({"steps": [{"step": 0, "completed": True}, {"step": 1, "completed": True}],
                       "score": 0.5, "reason": "only navigates"})
    server.script(['{"score": 2}', good])
    res = LLMJudge(_client(server)).judge(traj, tmp_path)
    assert res.score == 0.5 and res.name == "llm" and res.detail[0] == {"step": 0, "completed": True}
    assert len(server.requests) == 2
    content = server.requests[0]["messages"][1]["content"]
    assert sum(p.get("type") == "image_url" for p in content) >= 2  # step screenshots + final
    assert "0. Open Settings" in content[0]["text"]


def test_schema_is_the_documented_one():
    props = ACTION_SCHEMA["properties"]
    assert set(props["action"]["enum"]) == {"click", "long_press", "swipe", "input", "back", "home", "menu", "shade",
                                            "drawer", "launch", "enter", "done", "none"}
    assert set(ACTION_SCHEMA["required"]) == {"action", "control_id", "text", "direction", "step_index", "step_done", "reason"}


# --- steps outside the app -----------------------------------------------------------------

ONEPLUS = "imported/oneplus-settings-android11"
SETTINGS = "com.android.settings"
OUTSIDE = {"home", "menu", "shade", "drawer", "launch"}


def _where(body: dict) -> str:
    return re.search(r"Where: (.*)", _user_text(body)).group(1)


def _labelled(body: dict, label: str, resource: str = "") -> int:
    """The id of the control the stub 'model' would pick by its label on the screen it was sent."""
    screen = json.loads(re.search(r"Screen:\n(\{.*\})", _user_text(body)).group(1))
    return next(c["id"] for c in screen["controls"]
                if c["label"] == label and resource in (c.get("resource_id") or ""))


def _sent(traj):
    return [(s.action.type.value, s.action.target_label or s.action.package) for s in traj.steps if not s.noop]


def test_the_new_actions_reach_the_server_in_the_schema_and_the_prompt(server):
    ctx = _ctx([{"title": "Display"}], ["Swipe down from the top and tap the gear icon."])
    server.script([_reply(action="menu", step_done=False)])
    pred = LLMPredictor(_client(server), send_screenshot=False).predict(ctx)
    assert pred.action.type == ActionType.MENU and not pred.advance and not pred.expect_change
    body = server.requests[0]
    sent_enum = body["response_format"]["json_schema"]["schema"]["properties"]["action"]["enum"]
    assert OUTSIDE <= set(sent_enum)
    system = body["messages"][0]["content"]
    assert all(f"{name} = " in system for name in OUTSIDE)  # each is explained to the model
    assert _where(body) == f"inside the app {ctx.ui.package}"


def test_swipe_down_and_tap_the_gear_pulls_the_shade_down_on_the_device():
    def model(body: dict) -> str:  # a stub 'model' scripted per screen, no real LLM runs here
        step = int(re.search(r"Current step: (\d+)", _user_text(body)).group(1))
        if step == 0 and _where(body) == "the home screen":
            return _reply(action="shade", step_done=False, reason="swipe down from the top")
        if step == 0:
            return _reply(control_id=_labelled(body, "Settings", "settings_button"), reason="the gear")
        return _reply(control_id=_labelled(body, "Display"), step_index=1)

    with ScriptedLLMServer(responder=model) as server:
        dev = SimDevice.open(ONEPLUS)
        predictor = make_predictor(ExecutionConfig(predictor="llm"), llm_client=_client(server))
        traj = run_episode(["Swipe down from the top and tap the gear icon.", "Tap Display."], predictor, dev,
                           qid="q", url="u")
    assert traj.stop_reason == StopReason.COMPLETED
    assert _sent(traj) == [("swipe", "notification shade"), ("click", "Settings"), ("click", "Display")]
    swipe = traj.steps[0].action
    assert swipe.y == 0 and swipe.y2 > swipe.y  # from the top edge down, as the heuristic swipes
    assert swipe.rationale.startswith("shade: ") and "swipe down from the top" in swipe.rationale
    assert not traj.steps[0].step_done and traj.steps[1].step_done
    # the screen the device showed after the swipe is the shade, with its gear
    assert any((c.get("resource_id") or "").startswith("com.android.systemui:") for c in traj.steps[1].controls)
    assert traj.steps[0].changed
    assert traj.steps[1].action.target_resource_id == "com.android.systemui:id/settings_button"
    assert [_where(b) for b in server.requests[:2]] == ["the home screen",
                                                        "the notification shade (quick settings) is pulled down"]
    assert dev.current_app().package == SETTINGS


def test_the_drawer_from_inside_the_app_goes_home_first_and_the_step_waits_for_the_drawer():
    def model(body: dict) -> str:
        step, where = int(re.search(r"Current step: (\d+)", _user_text(body)).group(1)), _where(body)
        if step == 0:  # the stub claims the step done every time: only the drawer itself may end it
            return _reply(action="drawer", reason="open the app drawer")
        if where == "the launcher's app drawer":
            return _reply(control_id=_labelled(body, "Settings"), step_index=1)
        return _reply(action="none", step_index=1, step_done=False, reason="no drawer")

    with ScriptedLLMServer(responder=model) as server:
        dev = SimDevice.open(ONEPLUS)
        predictor = make_predictor(ExecutionConfig(predictor="llm"), llm_client=_client(server))
        traj = run_episode(["Open the app drawer.", "Tap Settings."], predictor, dev, qid="q", url="u", app=SETTINGS)
    assert traj.stop_reason == StopReason.COMPLETED, traj.stop_detail
    assert _sent(traj) == [("home", None), ("swipe", "app drawer"), ("click", "Settings")]
    assert [s.step_done for s in traj.steps] == [False, True, True]
    assert traj.steps[0].action.rationale.startswith("drawer: ")
    assert dev.current_app().package == SETTINGS


def test_launch_and_home_that_are_already_so_send_nothing_and_a_repeat_stops(server):
    dev = SimDevice.open(ONEPLUS)
    dev.reset(SETTINGS)
    dev.launch(SETTINGS)
    ctx = PredictContext(instructions=["Open Settings."], step_index=0, ui=UIContext.from_xml(dev.dump_xml()),
                         memory={}, app=SETTINGS)
    ctx.ui.package = dev.current_app().package
    server.script([_reply(action="launch", text="the Settings app"), _reply(action="launch", text="Chrome"),
                   _reply(action="home", step_done=False), _reply(action="home", step_done=False)])
    p = LLMPredictor(_client(server), send_screenshot=False)
    there = p.predict(ctx)
    assert there.noop and there.advance and "already in com.android.settings" in there.action.rationale
    chrome = p.predict(ctx)
    assert chrome.action.type == ActionType.LAUNCH and chrome.action.package == "com.android.chrome"
    dev.key("home")
    home = UIContext.from_xml(dev.dump_xml())
    home.package = dev.current_app().package
    ctx.ui = home
    first = p.predict(ctx)
    assert first.noop and not first.advance and "already on the home screen" in first.action.rationale
    assert p.predict(ctx) is None and "asked for home again" in ctx.stuck_reason


def test_a_launch_of_no_known_app_ends_the_episode_with_a_clear_step_status():
    with ScriptedLLMServer(responder=lambda body: _reply(action="launch", text="Datally", reason="open it")) as server:
        predictor = make_predictor(ExecutionConfig(predictor="llm"), llm_client=_client(server))
        traj = run_episode(["Open Datally."], predictor, SimDevice.open(ONEPLUS), qid="q", url="u")
    assert traj.stop_reason == StopReason.NO_ACTION
    assert traj.stop_detail == "step 1: the model wants to launch 'Datally', which is not a known app"
    assert traj.steps == []
    with ScriptedLLMServer() as server:
        server.script([_reply(action="launch", text=None)])
        ctx = _ctx([{"title": "Display"}], ["Open the app."])
        assert LLMPredictor(_client(server), send_screenshot=False).predict(ctx) is None
    assert ctx.stuck_reason == "step 1: the model wants to launch an app but named none"


def test_a_malformed_action_name_is_asked_again_then_raises_as_documented(server):
    ctx = _ctx([{"title": "Display"}], ["Swipe down from the top and tap the gear icon."])
    server.script([_reply(action="open_shade")] * 3)
    with pytest.raises(LLMOutputError, match="open_shade"):
        LLMPredictor(_client(server, retries=2), send_screenshot=False).predict(ctx)
    assert len(server.requests) == 3
    corrective = server.requests[1]["messages"][-1]["content"]
    assert "'open_shade' is not one of" in corrective and "'shade'" in corrective
    # a model that corrects itself goes on
    server.script([_reply(action="Shade"), _reply(action="shade", step_done=False)])
    pred = LLMPredictor(_client(server), send_screenshot=False).predict(ctx)
    assert pred.action.type == ActionType.SWIPE and pred.action.target_label == "notification shade"


def test_the_screen_data_lists_the_same_phone_actions_as_the_schema():
    from execution.predict.llm import SYSTEM_ACTIONS
    from execution.uicontext import GLOBAL_ACTIONS

    assert set(GLOBAL_ACTIONS) == set(SYSTEM_ACTIONS)
