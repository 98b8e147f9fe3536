"""Screens the OnePlus Settings app builds in code, given content from AOSP behaviour (aosp_screens.py).

Every test drives the world imported from the real decoded APK with taps on what the
dump shows, as a user would; state variables are read only as labels.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support_worlds import find, nodes, scroll_down, tap_text, texts

from phonesim.device import SimDevice
from phonesim.worlds.apk_map import parse_apk
from phonesim.worlds.apk_world import build_apk_world
from phonesim.worlds.coverage import apk_coverage

PACKAGE = "com.android.settings"


@pytest.fixture(scope="module")
def imported(shared_dir: Path):
    uimap = parse_apk(shared_dir / "apps" / "oneplus-settings-android11")
    doc, world = build_apk_world(uimap, name="oneplus-settings-android11")
    return uimap, doc, world


@pytest.fixture
def device(imported) -> SimDevice:
    dev = SimDevice(imported[2])
    dev.reset(PACKAGE)
    return dev


def _radios(device) -> dict[str, bool]:
    """Radio rows on screen: title -> checked."""
    out = {}
    for row in nodes(device):
        radio = next((n for n in row.iter("node") if n.get("class") == "android.widget.RadioButton"), None)
        title = next((n.get("text") for n in row.iter("node") if n.get("resource-id") == "android:id/title"), None)
        if radio is not None and title and row.get("clickable") == "true":
            out[title] = radio.get("checked") == "true"
    return out


def _switch_of(device, title: str) -> bool:
    """The checked state of the Switch in the row titled ``title``."""
    for row in nodes(device):
        if row.get("clickable") != "true":
            continue
        inner = list(row.iter("node"))
        if any(n.get("text") == title for n in inner):
            switch = next((n for n in inner if n.get("class") == "android.widget.Switch"), None)
            if switch is not None:
                return switch.get("checked") == "true"
    raise AssertionError(f"no switch row {title!r}; texts: {texts(device)}")


def _tap_row(device, title: str) -> None:
    """Tap the clickable row that shows ``title`` (not the toolbar title of the same words)."""
    for row in nodes(device):
        if row.get("clickable") == "true" and any(n.get("text") == title for n in row.iter("node")):
            x1, y1, x2, y2 = (int(v) for v in row.get("bounds").replace("][", ",").strip("[]").split(","))
            device.tap((x1 + x2) // 2, (y1 + y2) // 2)
            return
    raise AssertionError(f"no row {title!r}; texts: {texts(device)}")


def test_default_apps_lists_the_roles_and_each_picker_offers_the_installed_apps(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "Default Apps")
    shown = texts(device)
    for role in ("Browser App", "Home App", "Phone App", "SMS App", "Assist & voice input"):
        assert role in shown, shown
    assert "Chrome" in shown  # the row shows the app that holds the role
    tap_text(device, "Browser App")
    assert _radios(device) == {"Chrome": True, "Firefox": False}
    tap_text(device, "Firefox")
    assert _radios(device) == {"Chrome": False, "Firefox": True}
    device.key("back")
    assert "Firefox" in texts(device) and "Chrome" not in texts(device)
    tap_text(device, "SMS App")
    assert set(_radios(device)) == {"Messages"}


def test_the_digital_assistant_picker_offers_none(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "Default Apps")
    tap_text(device, "Assist & voice input")
    tap_text(device, "Default digital assistant app")
    radios = _radios(device)
    assert radios["Google"] is True and radios["None"] is False


def test_phone_ringtone_opens_a_sound_picker_with_none_and_the_choice_shows_in_the_row(device):
    tap_text(device, "Sounds & vibration")
    tap_text(device, "Phone ringtone")
    radios = _radios(device)
    assert "None" in radios and sum(radios.values()) == 1 and len(radios) >= 8
    tap_text(device, "Atria")
    device.key("back")
    assert "Atria" in texts(device)


def test_the_default_notification_sound_is_one_setting_on_both_screens(device):
    tap_text(device, "Sounds & vibration")
    tap_text(device, "Default notification sound")
    tap_text(device, "Capella")
    device.key("back")
    device.key("back")
    tap_text(device, "Apps & Notifications")
    tap_text(device, "Notifications")
    tap_text(device, "Advanced")
    tap_text(device, "Default notification sound")
    assert _radios(device)["Capella"] is True


def test_accounts_lists_accounts_and_add_account_and_remove_asks_to_confirm(device):
    tap_text(device, "Accounts")
    shown = texts(device)
    assert "alex.example@gmail.com" in shown and "Google" in shown and "Add Account" in shown
    tap_text(device, "alex.example@gmail.com")
    assert "Account sync" in texts(device)
    tap_text(device, "Account sync")
    assert _switch_of(device, "Contacts") is True
    device.key("back")
    tap_text(device, "Remove account")
    assert find(device, "Remove account?") is not None  # the dialog title
    assert any("delete all of its messages" in t for t in texts(device))
    confirm = [n for n in nodes(device) if n.get("resource-id") == "android:id/button1"]
    assert confirm and confirm[0].get("text") == "Remove account"
    tap_text(device, "Cancel")
    assert "Account sync" in texts(device)
    device.key("back")
    tap_text(device, "Add Account")
    assert {"Google", "Exchange"} <= set(texts(device))


def test_printing_has_the_default_print_service_switch_and_add_service(device):
    tap_text(device, "Bluetooth & device connection")
    tap_text(device, "Printing")
    shown = texts(device)
    assert "Default Print Service" in shown and "Add Service" in shown and "On" in shown
    tap_text(device, "Default Print Service")
    assert _switch_of(device, "Use print service") is True
    tap_text(device, "Use print service")
    assert _switch_of(device, "Use print service") is False
    device.key("back")
    assert "Off" in texts(device)


def test_sim_card_lock_has_the_lock_switch_and_change_pin_greyed_until_locked(device):
    tap_text(device, "Security & Lock Screen")
    tap_text(device, "SIM card lock")
    assert _switch_of(device, "Lock SIM card") is False
    change = next(n for n in nodes(device) if n.get("clickable") == "true"
                  and any(c.get("text") == "Change SIM PIN" for c in n.iter("node")))
    assert change.get("enabled") == "false"
    tap_text(device, "Lock SIM card")
    tap_text(device, "Change SIM PIN")
    assert any(n.get("class") == "android.widget.EditText" for n in nodes(device))


def test_mobile_network_opens_the_sim_page_with_mobile_data_and_roaming(device):
    """AOSP's MobileNetworkSummaryController opens the one SIM's page (mobile_network_settings.xml);
    the resources leave the row without a target."""
    tap_text(device, "Wi-Fi & network")
    tap_text(device, "Mobile network")
    for _ in range(3):
        if "Roaming" in texts(device):
            break
        scroll_down(device)
    assert _switch_of(device, "Roaming") is False
    tap_text(device, "Roaming")
    assert _switch_of(device, "Roaming") is True


def test_app_info_lists_apps_and_each_app_page_has_its_actions_and_pages(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "App info")
    listed = texts(device)
    assert {"Chrome", "Gmail", "Camera"} <= set(listed)
    tap_text(device, "WhatsApp")
    shown = texts(device)
    for label in ("WhatsApp", "Uninstall", "Force stop", "Notifications", "Permissions", "Storage & cache"):
        assert label in shown, (label, shown)
    tap_text(device, "Uninstall")
    assert find(device, "Do you want to uninstall this app?") is not None
    tap_text(device, "Cancel")
    tap_text(device, "Force stop")
    assert find(device, "Force stop?") is not None
    tap_text(device, "Cancel")
    tap_text(device, "Permissions")
    assert {"Camera", "Microphone", "Allow only while using the app"} <= set(texts(device))
    device.key("back")
    tap_text(device, "Storage & cache")
    assert {"Clear storage", "Clear cache"} <= set(texts(device))
    tap_text(device, "Clear storage")
    assert find(device, "Delete app data?") is not None
    tap_text(device, "Cancel")
    device.key("back")
    tap_text(device, "Mobile Data & Wi‑Fi")
    assert device.simulator.screen_id == "app_data_usage__com_whatsapp"
    device.key("back")
    # as on Android 11, Battery and Open by default sit behind Advanced
    assert "Battery" not in texts(device)
    tap_text(device, "Advanced")
    tap_text(device, "Battery")
    assert device.simulator.screen_id == "power_usage_detail__com_whatsapp"
    device.key("back")
    tap_text(device, "Advanced")
    tap_text(device, "Open by default")
    assert device.simulator.screen_id == "installed_app_launch_settings__com_whatsapp"


def test_a_preinstalled_app_offers_disable_instead_of_uninstall(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "App info")
    tap_text(device, "Chrome")
    shown = texts(device)
    assert "Disable" in shown and "Uninstall" not in shown


def test_an_apps_notification_switch_is_the_same_in_its_page_and_in_the_notifications_list(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "App info")
    tap_text(device, "Gmail")
    tap_text(device, "Notifications")
    assert _switch_of(device, 'All "Gmail" notifications') is True
    tap_text(device, 'All "Gmail" notifications')
    assert _switch_of(device, 'All "Gmail" notifications') is False
    for _ in range(3):
        device.key("back")
    tap_text(device, "Notifications")
    _tap_row(device, "Notifications")  # Recently sent > Notifications: every app with its switch
    assert _switch_of(device, "Gmail") is False and _switch_of(device, "Chrome") is True


def test_app_permissions_opens_the_permission_manager_and_a_choice_is_one_setting_everywhere(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "App Permissions")
    shown = texts(device)
    assert {"Camera", "Location", "Microphone", "Files and media"} <= set(shown)
    tap_text(device, "Camera")
    assert {"Chrome", "WhatsApp"} <= set(texts(device)) and "Gmail" not in texts(device)
    tap_text(device, "WhatsApp")
    assert _radios(device) == {"Allow only while using the app": True, "Ask every time": False, "Deny": False}
    tap_text(device, "Deny")
    device.key("back")
    assert "Deny" in texts(device)
    device.key("back")  # the permission manager
    device.key("back")  # Apps & Notifications
    tap_text(device, "App info")
    tap_text(device, "WhatsApp")
    tap_text(device, "Permissions")
    tap_text(device, "Camera")  # the app's own Permissions page opens the same choice
    assert _radios(device)["Deny"] is True


def test_install_unknown_apps_lists_the_apps_that_ask_and_each_has_its_switch(device):
    tap_text(device, "Apps & Notifications")
    tap_text(device, "Special App Access")
    tap_text(device, "Install unknown apps")
    shown = texts(device)
    assert {"Chrome", "Firefox", "WhatsApp"} <= set(shown) and "Camera" not in shown
    assert "Not allowed" in shown
    tap_text(device, "Firefox")
    assert _switch_of(device, "Allow from this source") is False
    tap_text(device, "Allow from this source")
    device.key("back")
    assert "Allowed" in texts(device)
    tap_text(device, "Chrome")
    assert _switch_of(device, "Allow from this source") is False  # one switch per app


def test_coverage_counts_the_built_screens_and_the_links_they_close(imported):
    uimap, doc, world = imported
    report = apk_coverage(uimap, world)
    built = report["built_from_aosp_behaviour"]
    assert built["screens"] == built["new_screens"] + built["per_app_or_account_copies"] + built["filled_xml_screens"]
    assert built["reachable_from_home"] == built["screens"] > 0
    closed = {(b["screen"], b["element"]) for b in report["built_links"]}
    assert {("app_and_notification", "Default Apps"), ("security_dashboard_settings", "SIM card lock"),
            ("app_and_notification", "App info"), ("sound_settings", "Phone ringtone"),
            ("network_and_internet", "Mobile network")} <= closed
    still_open = {(u["screen"], u["element"]) for u in report["unresolved"]}
    assert not closed & still_open
    # links to other apps' screens that AOSP does not describe stay unresolved, with their reason
    assert ("network_and_internet", "Wi-Fi calling") in still_open


def test_the_world_records_where_built_content_comes_from(imported):
    _, doc, _ = imported
    screens = {s["id"]: s for s in doc["screens"]}
    assert "DefaultAppPickerFragment" in screens["default_browser_settings"]["source"]
    assert "AccountPreferenceController" in screens["accounts_dashboard_settings"]["source"]
    browser_var = next(n["var"] for n in screens["default_browser_settings"]["nodes"] if n.get("kind") == "radio")
    assert "assumed" in doc["state"][browser_var]["description"]
    # an XML screen the app does not fill in code keeps no source
    assert "source" not in screens["display_settings"]


# -- the screen lock (Security & Lock Screen > Screen lock)

def _screen_lock_summary(device) -> str:
    """The summary of the Screen lock row on Security & Lock Screen (the current lock type)."""
    for row in nodes(device):
        inner = list(row.iter("node"))
        if row.get("clickable") == "true" and any(n.get("text") == "Screen lock" for n in inner):
            return next((n.get("text") for n in inner if n.get("resource-id") == "android:id/summary"), "")
    raise AssertionError(f"no Screen lock row; texts: {texts(device)}")


def _type_into_field(device, text: str) -> None:
    field = next((n for n in nodes(device) if n.get("class") == "android.widget.EditText"), None)
    assert field is not None, texts(device)
    x1, y1, x2, y2 = (int(v) for v in field.get("bounds").replace("][", ",").strip("[]").split(","))
    device.tap((x1 + x2) // 2, (y1 + y2) // 2)
    device.input_text(text)


def _open_screen_lock(device) -> None:
    tap_text(device, "Security & Lock Screen")
    tap_text(device, "Screen lock")


def test_screen_lock_opens_the_chooser_with_the_five_lock_types(device):
    tap_text(device, "Security & Lock Screen")
    assert _screen_lock_summary(device) == "Swipe"  # a phone with no secure lock (the modelled start)
    tap_text(device, "Screen lock")
    shown = texts(device)
    assert "Choose screen lock" in shown
    for choice in ("None", "Swipe", "Pattern", "PIN", "Password"):
        assert choice in shown, shown
    # the skip rows belong to the fingerprint and face setups only
    assert "Continue without fingerprint" not in shown and "Continue without face unlock" not in shown


def test_choosing_pin_enters_it_twice_and_sets_the_lock(device):
    _open_screen_lock(device)
    _tap_row(device, "PIN")
    assert {"Set screen lock", "For security, set PIN", "Cancel", "Next"} <= set(texts(device))
    _type_into_field(device, "1234")
    assert "1234" in texts(device)
    tap_text(device, "Next")
    assert {"Re-enter your PIN", "Confirm"} <= set(texts(device))
    _type_into_field(device, "1234")
    tap_text(device, "Confirm")
    assert "Security & Lock Screen" in texts(device)  # back where the user started
    assert _screen_lock_summary(device) == "PIN"
    assert device.simulator.state["screen_lock_type"] == "PIN"  # label only


def test_choosing_none_or_swipe_sets_the_lock_and_closes_the_chooser(device):
    _open_screen_lock(device)
    _tap_row(device, "None")
    assert "Choose screen lock" not in texts(device)
    assert _screen_lock_summary(device) == "None"
    tap_text(device, "Screen lock")
    _tap_row(device, "Swipe")
    assert _screen_lock_summary(device) == "Swipe"


def test_cancelling_a_lock_setup_returns_to_the_chooser_and_changes_nothing(device):
    _open_screen_lock(device)
    _tap_row(device, "Pattern")
    assert "Draw an unlock pattern" in texts(device)
    tap_text(device, "Cancel")
    assert "Choose screen lock" in texts(device)
    device.key("back")
    assert _screen_lock_summary(device) == "Swipe"


def test_the_screen_lock_link_is_counted_and_sourced(imported):
    uimap, doc, world = imported
    report = apk_coverage(uimap, world)
    assert ("security_dashboard_settings", "Screen lock") in {(b["screen"], b["element"]) for b in report["built_links"]}
    screens = {s["id"]: s for s in doc["screens"]}
    assert "ChooseLockGeneric" in screens["security_settings_picker"]["source"]
    assert "ChooseLockPassword" in screens["choose_lock_pin"]["source"]
    assert "ChooseLockGeneric" in doc["state"]["screen_lock_type"]["description"]


def test_fingerprint_with_no_lock_asks_for_a_backup_lock_and_sets_it(device):
    tap_text(device, "Security & Lock Screen")
    tap_text(device, "Fingerprint")
    assert {"Unlock with fingerprint", "Cancel", "Continue"} <= set(texts(device))
    tap_text(device, "Continue")
    shown = set(texts(device))
    assert {"Fingerprint + Pattern", "Fingerprint + PIN", "Fingerprint + Password",
            "Continue without fingerprint"} <= shown
    _tap_row(device, "Fingerprint + PIN")
    assert "To use fingerprint, set PIN" in texts(device)
    _type_into_field(device, "2580")
    tap_text(device, "Next")
    _type_into_field(device, "2580")
    tap_text(device, "Confirm")
    assert _screen_lock_summary(device) == "PIN"  # the backup lock is the screen lock


def test_continue_without_fingerprint_returns_to_security_unchanged(device):
    tap_text(device, "Security & Lock Screen")
    tap_text(device, "Fingerprint")
    tap_text(device, "Continue")
    _tap_row(device, "Continue without fingerprint")
    assert _screen_lock_summary(device) == "Swipe"


def test_security_hides_the_work_profile_section_and_shows_encryption_as_done(device):
    tap_text(device, "Security & Lock Screen")
    shown = texts(device)
    assert "Work profile security" not in shown and "Work profile lock" not in shown
    tap_text(device, "Encryption & Credentials")
    assert "Encrypted" in texts(device)
    before = texts(device)
    tap_text(device, "Encrypt Phone")  # an encrypted phone's status row opens nothing
    assert texts(device) == before


def test_clear_credentials_asks_to_confirm_first(device):
    tap_text(device, "Security & Lock Screen")
    tap_text(device, "Encryption & Credentials")
    tap_text(device, "Clear Credentials")
    assert {"Remove all the contents?", "Cancel", "OK"} <= set(texts(device))
    tap_text(device, "Cancel")
    assert "Clear Credentials" in texts(device)
    done = [v for v in device.simulator.state if v.startswith("credentials_reset") and v.endswith("__done")]
    assert len(done) == 1 and device.simulator.state[done[0]] is False  # label only
    tap_text(device, "Clear Credentials")
    tap_text(device, "OK")
    assert device.simulator.state[done[0]] is True


def _trust_agents_enabled(device) -> bool:
    """Scroll Security & Lock Screen to the Trust Agents row; is it enabled?"""
    for _ in range(8):
        # the innermost node holding the row's title and summary (ancestors come first in the dump)
        rows = [r for r in nodes(device) if not r.get("text")
                and any(n.get("text") == "Trust Agents" for n in r.iter("node"))]
        if rows:
            return rows[-1].get("enabled") == "true"
        assert scroll_down(device), texts(device)
    raise AssertionError(f"no Trust Agents row; texts: {texts(device)}")


def test_trust_agents_need_a_secure_screen_lock(device):
    tap_text(device, "Security & Lock Screen")
    assert not _trust_agents_enabled(device)  # no secure lock at the start
    device.key("back")
    _open_screen_lock(device)
    _tap_row(device, "Password")
    _type_into_field(device, "secret1")
    tap_text(device, "Next")
    _type_into_field(device, "secret1")
    tap_text(device, "Confirm")
    assert _screen_lock_summary(device) == "Password"
    assert _trust_agents_enabled(device)
