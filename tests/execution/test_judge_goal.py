"""The judge reads the question's goal: its control, its final state, and whether the page's steps reached it.

Trajectories are built by hand here (screens as the agent records them), so each rule is checked on
its own: the goal control named by the question's words or a knowledge card, a home-screen category
never taken for the goal, the final net state of a switch, a goal already met, a "see X" goal met
by reaching X's screen, a dry run credited, and an informational last step that reaches nothing.
"""

from __future__ import annotations

from typing import Any, Optional

import pytest

from execution.goal import fit, read_goal
from execution.judge import HeuristicJudge
from execution.knowledge.cards import Card, KnowledgeBase
from verirank_core.execution_records import Action, ActionType, StepRecord, StopReason, Trajectory


def row(label: str, checked: Optional[bool] = None, role: Optional[str] = None, y: int = 0,
        summary: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {"id": y, "label": label, "role": role or ("switch" if checked is not None else "list item"),
                           "bounds": [0, y * 100, 1080, y * 100 + 90], "actions": ["click"]}
    if checked is not None:
        out["checked"] = checked
    if summary:
        out["summary"] = summary
    return out


def screen(title: str, *controls: dict[str, Any], package: str = "com.android.settings"
           ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    sig = title + "|" + "|".join(f"{c['label']}={c.get('checked')}" for c in controls)
    return {"title": title, "signature": sig, "texts": [title], "package": package}, list(controls)


HOME = screen("Settings", row("Wi-Fi & network", y=1), row("Apps & Notifications", y=2), row("System", y=3),
              row("About Phone", y=4))


def step(i: Optional[int], before, label: Optional[str] = None, kind: ActionType = ActionType.CLICK,
         noop: bool = False, deviation_kind: Optional[str] = None, done: bool = True) -> StepRecord:
    scr, controls = before
    return StepRecord(index=0, step_index=i, action=Action(type=kind, target_label=label), controls=controls,
                      screen=scr, ok=True, noop=noop, step_done=done, deviation=deviation_kind is not None,
                      deviation_kind=deviation_kind)


def trajectory(query: str, instructions: list[str], steps: list[StepRecord], final, world: Optional[str] = None,
               stop: StopReason = StopReason.COMPLETED) -> Trajectory:
    scr, controls = final
    if instructions and instructions[0] == "Open Settings.":
        # the agent found Settings already open: a no-op that completes the step, as run_episode records it
        steps = [step(0, HOME, None, ActionType.WAIT, noop=True), *steps]
    for k, s in enumerate(steps):
        s.index = k
    return Trajectory(qid="q", url="u", device="sim:test", world=world, app="com.android.settings",
                      instructions=instructions, steps=steps, stop_reason=stop, query=query, final_screen=scr,
                      final_controls=controls)


JUDGE = HeuristicJudge(use_embeddings=False)


# --- reading the question ---------------------------------------------------------------------

@pytest.mark.parametrize("query, want, words", [
    ("how to turn on wifi calling on android", "on", {"wifi", "call"}),
    ("How to turn Bluetooth off", "off", {"bluetooth"}),
    ("how to turn talkback on or off on android", "either", {"talkback"}),
    ("how to check what android version my phone has", "see", {"android", "version"}),
    ("how to turn off notifications for one app on android", "off", {"notification"}),
    ("how to turn on wifi and connect to a network on android", "on", {"wifi"}),
    ("how to set up a vpn on android phone", "open", {"vpn"}),
    ("How to change screen timeout to 5 minutes", "set", {"screen", "timeout"}),
    ("how to set my phone to vibrate", "set", {"vibrate"}),
    ("how to forget a wifi network on android", "do", {"wifi", "network"}),
    ("how to clear app cache", "do", {"app", "cache"}),
])
def test_read_goal(query, want, words):
    goal = read_goal(query)
    assert goal is not None and goal.want == want and set(goal.words) == words
    assert read_goal("How to change screen timeout to 5 minutes").value == "5 minutes"


def test_fit_prefers_the_full_name_and_rejects_other_settings():
    goal = read_goal("how to turn on wifi calling")
    assert fit(goal, "Wi‑Fi calling") == 1.0
    assert fit(goal, "Wi-Fi") == 0.0  # half of the name: another setting
    assert fit(goal, "Wi-Fi hotspot") == 0.0  # a word the question does not say
    assert fit(goal, "Advanced") == 0.0  # generic words name nothing


@pytest.mark.parametrize("query, label", [
    ("how to require unlocking the phone for NFC", "Require device unlock for NFC"),  # unlocking / unlock
    ("how to turn on auto sync", "Automatically sync app data"),  # a clipped word, one extra word
    ("how to allow the accessibility shortcut from the lock screen", "Shortcut from Lock Screen"),
])
def test_fit_reads_word_forms_and_long_names(query, label):
    assert fit(read_goal(query), label) >= 0.9
    assert fit(read_goal(query), "Auto-sync personal data") == 0.0  # two words the question does not say


@pytest.mark.parametrize("query, label", [
    # a word that goes on with another word is another word (real-text: "using google chromecast"
    # was judged done on opening Chrome)
    ("how to use google chromecast", "Chrome"),
    ("how to skype for chromebook", "Chrome"),
    ("how to change the screen timeout", "Time"),
    ("how to turn on bluetooth", "Blue light filter"),
])
def test_a_longer_word_is_not_another_form(query, label):
    assert fit(read_goal(query), label) == 0.0


@pytest.mark.parametrize("query, label", [
    ("how to turn on auto rotate", "Auto-rotate screen"),
    ("how to customize the lock screen", "Lock screen customization"),
])
def test_forms_of_one_word_still_match(query, label):
    assert fit(read_goal(query), label) >= 0.5


def test_cards_name_the_goal_by_the_questions_words():
    kb = KnowledgeBase([Card("Screen mirroring", "Cast", "test"), Card("Android Version", "About Phone", "test"),
                        Card("screen zoom", "Display Size", "test")])
    assert ("Cast", False) in read_goal("how to mirror my android phone screen to a tv", kb).titles
    assert ("About Phone", True) in read_goal("how to check what android version my phone has", kb).titles
    # the card's words must be the question's head, not a qualifier ("on my phone screen")
    assert not read_goal("how to turn off magnification zoom on my phone screen", kb).titles


# --- switches: the final net state, a goal already met --------------------------------------------

NET = screen("Wi-Fi & network", row("Wi‑Fi", False, y=1), row("Wi-Fi calling", False, y=2))
NET_CALLING_ON = screen("Wi-Fi & network", row("Wi‑Fi", False, y=1), row("Wi-Fi calling", True, y=2))
STEPS = ["Open Settings.", "Tap Wi-Fi & network.", "Turn on Wi-Fi calling."]


def test_switch_turned_on_by_the_page_is_met():
    traj = trajectory("how to turn on wifi calling", STEPS,
                      [step(1, HOME, "Wi-Fi & network"), step(2, NET, "Wi-Fi calling")], NET_CALLING_ON)
    res = JUDGE.judge(traj)
    assert res.score == 1.0 and res.goal_met_before is False
    assert res.detail[-1]["goal_control"] == "Wi-Fi calling"


def test_switch_turned_on_then_off_again_is_not_on():
    steps = STEPS + ["Tap Wi-Fi calling again to finish."]
    traj = trajectory("how to turn on wifi calling", steps,
                      [step(1, HOME, "Wi-Fi & network"), step(2, NET, "Wi-Fi calling"),
                       step(3, NET_CALLING_ON, "Wi-Fi calling")], NET)
    res = JUDGE.judge(traj)
    assert res.score < 1.0 and "off at the end" in res.detail[-1]["why"]


def test_switch_already_on_is_credited_and_recorded():
    traj = trajectory("how to turn on wifi calling", STEPS,
                      [step(1, HOME, "Wi-Fi & network"), step(2, NET_CALLING_ON, "Wi-Fi calling", ActionType.WAIT,
                                                                 noop=True)], NET_CALLING_ON)
    res = JUDGE.judge(traj)
    assert res.score == 1.0 and res.goal_met_before is True
    assert res.detail[-1]["goal_met_before"] is True


def test_another_switch_is_not_the_goal():
    net_wifi_on = screen("Wi-Fi & network", row("Wi‑Fi", True, y=1), row("Wi-Fi calling", False, y=2))
    traj = trajectory("how to turn on wifi calling", ["Open Settings.", "Tap Wi-Fi & network.", "Turn on Wi-Fi."],
                      [step(1, HOME, "Wi-Fi & network"), step(2, NET, "Wi‑Fi")], net_wifi_on)
    assert JUDGE.judge(traj).score < 1.0


# --- navigation goals -----------------------------------------------------------------------------

ABOUT = screen("About Phone", row("Android version", y=1, summary="11"), row("Build number", y=2, summary="11.0.4"))


def test_see_goal_is_met_when_its_screen_is_reached_and_later_steps_do_not_matter():
    kb = KnowledgeBase([Card("Android Version", "About Phone", "test")])
    judge = HeuristicJudge(use_embeddings=False)
    steps = ["Open Settings.", "Tap About phone.", "Tap Software information.", "Check under Android version."]
    traj = trajectory("how to check what android version my phone has", steps,
                      [step(1, HOME, "About Phone")], ABOUT, stop=StopReason.NO_ACTION)
    # without cards the version row on the reached screen is the thing to see
    res = judge.judge(traj)
    assert res.score == 1.0, res.detail[-1]
    assert any(r.get("after_goal") for r in res.detail[:-1])  # "Software information" is after the goal
    assert kb.titles("android version") == ["About Phone"]


def test_a_bare_link_to_x_is_not_seeing_x():
    net = screen("Wi-Fi & network", row("Mobile network", y=1), row("Data Usage", y=2))
    query = "how to check how much mobile data i have used on android"
    steps = ["Open Settings.", "Tap Wi-Fi & network.", "Tap Mobile network."]
    traj = trajectory(query, steps, [step(1, HOME, "Wi-Fi & network"), step(2, net, "Mobile network")],
                      screen("Mobile network", row("Roaming", False, y=1)))
    assert JUDGE.judge(traj).score < 1.0
    usage = screen("Data Usage", row("Mobile data usage", y=1, summary="2.1 GB used"))
    traj = trajectory(query, ["Open Settings.", "Tap Wi-Fi & network.", "Tap Data usage."],
                      [step(1, HOME, "Wi-Fi & network"), step(2, net, "Data Usage")], usage)
    assert JUDGE.judge(traj).score == 1.0


def test_home_category_is_not_the_goal():
    apps = screen("Apps & Notifications", row("See all apps", y=1), row("Notifications", y=2))
    traj = trajectory("how to turn off notifications for one app", ["Open Settings.", "Tap Apps & notifications."],
                      [step(1, HOME, "Apps & Notifications")], apps)
    res = JUDGE.judge(traj)
    assert res.score < 1.0
    notif = screen("Notifications", row("Allow notification dots", False, y=1))
    traj = trajectory("how to turn off notifications for one app",
                      ["Open Settings.", "Tap Apps & notifications.", "Tap Notifications."],
                      [step(1, HOME, "Apps & Notifications"), step(2, apps, "Notifications")], notif)
    assert JUDGE.judge(traj).score == 1.0


def test_home_category_is_not_the_goal_when_the_episode_starts_on_the_launcher():
    launcher = screen("Home", row("Settings", y=1), row("Phone", y=2), package="net.oneplus.launcher")
    apps = screen("Apps & Notifications", row("See all apps", y=1), row("Notifications", y=2))
    traj = trajectory("how to turn off notifications for one app",
                      ["Swipe up and tap Settings.", "Tap Apps & notifications."],
                      [step(0, launcher, "Settings"), step(1, HOME, "Apps & Notifications")], apps)
    assert JUDGE.judge(traj).score < 1.0


def test_informational_last_step_without_the_goal_control_is_not_one():
    sysm = screen("System", row("Languages & input", y=1), row("Gestures", y=2))
    traj = trajectory("how to change the language on my android phone",
                      ["Open Settings.", "Tap System.", "You will see your language options there."],
                      [step(1, HOME, "System")], sysm)
    res = JUDGE.judge(traj)
    assert res.score <= 0.5 and res.detail[-1]["terminal"] is False


def test_page_that_skips_every_later_step_without_reaching_the_goal_is_not_one():
    # an over-eager agent marked the absent setting's step done without acting: nothing reached it
    traj = trajectory("how to set up a vpn on android phone",
                      ["Open Settings.", "Tap Wi-Fi & network.", "Tap VPN."],
                      [step(1, HOME, "Wi-Fi & network"), step(2, NET, None, ActionType.WAIT, noop=True,
                                                              deviation_kind="skip")], NET)
    assert JUDGE.judge(traj).score < 1.0


def test_an_action_on_an_item_is_done_by_the_control_naming_it_not_by_a_row_named_like_the_item():
    # real-dev6's hF03-t04: "forget a wifi network" is not met by opening "Wi-Fi & network" (named
    # exactly like the item), when the page's own "Forget This Network" is never reached
    goal = read_goal("how to forget a wifi network on android")
    assert goal is not None and goal.action == "forget"
    wifi = screen("Wi-Fi & network", row("Wi\u2011Fi", True, y=1), row("Airplane mode", False, y=2))
    steps = ["Go to Settings > Wi-Fi.", "Tap the i next to the network name.", "Tap Forget This Network."]
    traj = trajectory("how to forget a wifi network on android", steps, [step(0, HOME, "Wi-Fi & network")], wifi,
                      stop=StopReason.NO_ACTION)
    res = JUDGE.judge(traj)
    assert res.score < 1.0 and res.detail[-1]["terminal"] is False
    # tapping the control that names the action ("Forget") does it
    details = screen("Home-Net", row("Forget", y=1), row("Share", y=2))
    saved = screen("Saved networks", row("Home-Net", y=1), row("Office", y=2))
    traj = trajectory("how to forget a wifi network on android", ["Tap Home-Net.", "Tap Forget."],
                      [step(0, saved, "Home-Net"), step(1, details, "Forget")], saved)
    res = JUDGE.judge(traj)
    assert res.score == 1.0 and res.detail[-1]["goal_control"] == "Forget"


# --- dry run --------------------------------------------------------------------------------------

def test_dry_run_of_the_irreversible_confirm_is_credited_and_said():
    reset = screen("Reset options", row("Erase all data (factory reset)", y=1))
    erase = screen("Erase all data (factory reset)", row("Erase all data", y=5))
    traj = trajectory("how to factory reset my android phone",
                      ["Open Settings.", "Tap System > Reset options.", "Tap Erase all data (factory reset).",
                       "Tap Erase all data."],
                      [step(1, HOME, "System"), step(1, reset, "Erase all data (factory reset)"),
                       step(3, erase, "Erase all data", ActionType.WAIT, noop=True, deviation_kind="dry_run")],
                      erase)
    res = JUDGE.judge(traj)
    assert res.score == 1.0 and res.dry_run
    assert "did not press" in res.detail[-1]["dry_run"]
    assert res.detail[3]["deviation"] == "dry_run" and res.detail[3]["effect"] is True


# --- a switch page, a switch named after the action, a parent row ------------------------------------

DISPLAY = screen("Display", row("Adaptive Brightness", False, y=1), row("Dark mode", y=2))


def test_opening_a_switch_page_is_not_turning_it_on():
    dark_off = screen("Dark mode", row("Manual", False, y=1))
    dark_on = screen("Dark mode", row("Manual", True, y=1))
    nav = ["Open Settings.", "Tap Display.", "Tap Dark mode."]
    traj = trajectory("how to turn on dark mode", nav,
                      [step(1, HOME, "Display"), step(2, DISPLAY, "Dark mode")], dark_off)
    res = JUDGE.judge(traj)
    assert res.score == 0.5 and res.detail[-1]["goal_control"] == "Manual"  # the page's main switch
    traj = trajectory("how to turn on dark mode", nav + ["Turn on the switch."],
                      [step(1, HOME, "Display"), step(2, DISPLAY, "Dark mode"), step(3, dark_off, "Manual")], dark_on)
    assert JUDGE.judge(traj).score == 1.0


def test_switch_named_after_the_turning_off_must_be_on():
    saver = screen("Battery Saver", row("Turn on now", False, y=1), row("Turn off when charged", False, y=2))
    saver_on = screen("Battery Saver", row("Turn on now", False, y=1), row("Turn off when charged", True, y=2))
    query = "how to turn off battery saver automatically when charged"
    traj = trajectory(query, ["Open Settings.", "Tap Battery Saver."], [step(1, HOME, "Battery Saver")], saver)
    res = JUDGE.judge(traj)
    assert res.score < 1.0 and res.detail[-1]["goal_control"] == "Turn off when charged"
    traj = trajectory(query, ["Open Settings.", "Tap Battery Saver.", "Turn on Turn off when charged."],
                      [step(1, HOME, "Battery Saver"), step(2, saver, "Turn off when charged")], saver_on)
    assert JUDGE.judge(traj).score == 1.0


def test_a_row_named_by_part_of_the_question_is_a_place_not_the_goal():
    system = screen("System", row("Accessibility", y=1), row("Gestures", y=2))
    access = screen("Accessibility", row("Mono Audio", False, y=1), row("Advanced", y=2))
    traj = trajectory("how to allow the accessibility shortcut from the lock screen",
                      ["Open Settings.", "Tap System.", "Tap Accessibility."],
                      [step(1, HOME, "System"), step(2, system, "Accessibility")], access)
    assert HeuristicJudge(use_embeddings=True).judge(traj).score < 1.0


def test_a_later_step_naming_the_goal_more_fully_must_be_followed():
    # "Accounts" says the question's "account"; the page then names the thing asked for more fully,
    # "Samsung account", which this phone lacks: the reader has not created a Samsung account
    home = screen("Settings", row("Display", y=1), row("Accounts", y=2), row("System", y=3))
    accounts = screen("Accounts", row("Add Account", y=1), row("Automatically sync app data", True, y=2))
    steps = ["Open Settings.", "Tap Accounts.", "Tap Add account.", "Tap Samsung account."]
    records = [step(1, home, "Accounts"), step(2, accounts, "Add Account", done=False)]
    res = JUDGE.judge(trajectory("how to create a samsung account", steps, records, accounts,
                                 stop=StopReason.NO_ACTION))
    assert res.score < 1.0 and res.detail[-1]["terminal"] is False
    assert "step 4 names the goal more fully ('Samsung account')" in res.detail[-1]["why"]
    # a question that does not name Samsung is answered at Accounts; the later step is another
    # provider's business, after the goal
    res = JUDGE.judge(trajectory("how to manage accounts", steps, records, accounts, stop=StopReason.NO_ACTION))
    assert res.score == 1.0, res.detail[-1]
    # the fuller name followed: the reader got there
    samsung = screen("Samsung account", row("Create account", y=1))
    followed = [step(1, home, "Accounts"), step(2, accounts, "Add Account"),
                step(3, screen("Add an account", row("Samsung account", y=1)), "Samsung account")]
    res = JUDGE.judge(trajectory("how to create a samsung account", steps, followed, samsung))
    assert res.score == 1.0, res.detail[-1]


def test_the_phone_a_question_is_asked_on_does_not_name_the_goal_further():
    # "on a Samsung Galaxy" says which phone; a later "Galaxy ringtones" row is that phone's, a
    # choice after the goal, not a fuller name of what is asked
    sound = screen("Sounds & vibration", row("Ringtone", y=1), row("Vibrate for calls", False, y=2))
    ringtone = screen("Ringtone", row("Oxygen", y=1), row("Alarm", y=2))
    steps = ["Open Settings.", "Tap Sounds & vibration.", "Tap Ringtone.", "Tap Galaxy ringtones."]
    records = [step(1, HOME, "Sounds & vibration"), step(2, sound, "Ringtone")]
    res = JUDGE.judge(trajectory("how to change the ringtone on a samsung galaxy", steps, records, ringtone,
                                 stop=StopReason.NO_ACTION))
    assert res.score == 1.0, res.detail[-1]
    res = JUDGE.judge(trajectory("how to change the galaxy ringtone", steps, records, ringtone,
                                 stop=StopReason.NO_ACTION))
    assert res.score < 1.0 and "names the goal more fully ('Galaxy ringtones')" in res.detail[-1]["why"]
