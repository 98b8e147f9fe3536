"""Screens that Settings builds in code, given their content from documented AOSP behaviour.

The preference XMLs of a decoded APK describe most of Settings, but some screens
are filled by Java code at run time: the Default apps pickers list the installed
apps that can take a role, the Accounts screen lists the accounts, Printing lists
the print services, the app list and each app's info page come from the package
manager, a few links (Default Apps, SIM card lock, Screen lock, Fingerprint) are made by a
fragment or controller that ``fragment_xml.json`` cannot see, and the lock setup screens
(ChooseLockPassword / ChooseLockPattern) are drawn from layouts. Without them the world shows empty pages where a
phone shows choices, and the right tap of a how-to page fails.

:func:`add_code_built_screens` fills them in on a parsed :class:`UIMap`, the same
way ``aosp_arrays.py`` fills in list options: each link or screen it makes records
its source (``MapElement.built_from`` / ``MapScreen.built_from``), the world keeps
it (screen ``source``, state variable ``description``), and the coverage report
counts it. Titles come from the APK's own strings when it has them, else from the
stock AOSP English text named here.

What the APK cannot tell, the installed apps, accounts and sounds, is an
assumption stated in :data:`INSTALLED_APPS`, :data:`ACCOUNTS` and :data:`SOUNDS`:
plausible content for a OnePlus 8 on OxygenOS 11, not a measurement of one.

Sources (Android 11, android-11.0.0_r1; ``Settings`` = ``packages/apps/Settings/src/com/android/settings``):
see the ``SRC_*`` constants.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Optional, Protocol

from phonesim.worlds.uimap import MapElement, MapScreen, UIMap, Unresolved

__all__ = ["InstalledApp", "INSTALLED_APPS", "ACCOUNTS", "SOUNDS", "CODE_LINKS", "PICKERS",
           "add_code_built_screens", "app_slug"]



class StringTable(Protocol):
    """The APK's strings as ``apk_map.StringTable`` gives them (a protocol: the APK parser imports this module)."""

    def plain(self, name: str) -> str: ...


_S = "AOSP packages/apps/Settings (Android 11) "
SRC_DEFAULT_APPS = _S + "applications/DefaultAppSettings.java: getPreferenceScreenResId() is R.xml.app_default_settings"
SRC_ICC_LOCK = _S + "IccLockSettings.java: addPreferencesFromResource(R.xml.sim_lock_settings)"
SRC_PICKER = _S + "applications/defaultapps/DefaultAppPickerFragment.java: one radio button per app that can take the role"
SRC_ASSIST = _S + "applications/assist/DefaultAssistPreferenceController.java: the row opens DefaultAssistPicker"
SRC_MOBILE_NETWORK = (_S + "network/MobileNetworkSummaryController.java: with one SIM the row opens "
                      "MobileNetworkActivity (network/telephony/MobileNetworkSettings, R.xml.mobile_network_settings)")
SRC_RINGTONE = (_S + "DefaultRingtonePreference.java opens RingtoneManager.ACTION_RINGTONE_PICKER: "
                "a single choice of 'None' (EXTRA_RINGTONE_SHOW_SILENT) and the sounds of its type")
SRC_ACCOUNTS = (_S + "accounts/AccountPreferenceController.java: one row per account (title: account name, "
                "summary: account type) and 'Add account'")
SRC_ACCOUNT_DETAIL = (_S + "accounts/AccountDetailDashboardFragment.java (R.xml.account_type_settings) with "
                      "RemoveAccountPreferenceController: 'Remove account' asks to confirm")
SRC_ACCOUNT_SYNC = _S + "accounts/AccountSyncSettings.java: one SyncStateSwitchPreference per synced data type"
SRC_ADD_ACCOUNT = _S + "accounts/ChooseAccountPreferenceController.java: one row per account type the apps provide"
SRC_PRINT = (_S + "print/PrintSettingsFragment.java: a row per print service (summary On/Off) and 'Add service'; "
             "print/PrintServiceSettingsFragment.java: the service's on/off switch bar")
SRC_APP_LIST = _S + "applications/manageapplications/ManageApplications.java: the installed apps, A to Z"
SRC_APP_NOTIF_LIST = (_S + "applications/manageapplications/ManageApplications.java (LIST_TYPE_NOTIFICATION): "
                      "each app with its notification switch")
SRC_APP_INFO = (_S + "applications/appinfo/AppInfoDashboardFragment.java (R.xml.app_info_settings) and "
                "AppActionButtonPreferenceController: Open, Uninstall (Disable for a system app), Force stop")
SRC_APP_ROWS = _S + "applications/appinfo/*PreferenceController.java: each row's handleClick opens the app's page"
SRC_APP_NOTIF = _S + "notification/app/AppNotificationSettings.java: the 'All <app> notifications' switch bar"
SRC_APP_STORAGE = _S + "applications/AppStorageSettings.java: Clear storage (asks to confirm) and Clear cache"
SRC_PERMISSIONS = ("AOSP packages/apps/PermissionController (Android 11) AppPermissionsFragment: the app's "
                   "permission groups, Allowed and Denied")
SRC_SWITCH_BAR = (_S + "widget/SwitchBar.java on WifiSettings (wifi/WifiEnabler.java) and BluetoothSettings "
                  "(bluetooth/BluetoothSwitchPreferenceController.java): the page's on/off bar, the same "
                  "setting as the row that opens it")
SRC_ONEPLUS_PICKER = ("OnePlus picker class (com.oneplus.settings.defaultapp.view) that builds from layouts; "
                      "shown as AOSP " + SRC_PICKER.split(_S, 1)[-1])
SRC_SPECIAL_ACCESS = (_S + "applications/manageapplications/ManageApplications.java (special access list types: "
                      "the apps that ask for the access, Allowed / Not allowed) and the app-op detail fragments "
                      "(ExternalSourcesDetails, DrawOverlayDetails, WriteSettingsDetails, ...) with their XML")
SRC_PERMISSION_MANAGER = ("AOSP packages/apps/PermissionController (Android 11) ManagePermissionsFragment and "
                          "PermissionAppsFragment: the permission groups, then the apps Allowed / Denied for one")
SRC_APP_PERMISSION = ("AOSP packages/apps/PermissionController (Android 11) AppPermissionFragment: one app's "
                      "choice for one permission group (while-in-use choices for location, camera, microphone)")
SRC_SOUNDS = "AOSP frameworks/base/data/sounds (ringtones/, notifications/, alarms/): sound titles"
SRC_SCREEN_LOCK = (_S + "security/ChangeScreenLockPreferenceController.java: the Screen lock row opens "
                   "ChooseLockGeneric (R.xml.security_settings_picker) directly when no secure lock is set (a set "
                   "lock is confirmed first: not modelled, the phone starts with Swipe); its summary is the lock type")
SRC_LOCK_PICKER = (_S + "password/ChooseLockGeneric.java: updatePreferencesOrFinish drops 'Continue without "
                   "fingerprint/face' outside those setups; None and Swipe set the lock and finish; Pattern, PIN "
                   "and Password open ChooseLockPattern / ChooseLockPassword")
SRC_LOCK_SETUP = (_S + "password/ChooseLockPassword.java, ChooseLockPattern.java: stage Introduction (header "
                  "'Set screen lock', 'For security, set PIN', Cancel / Next), then NeedToConfirm ('Re-enter your "
                  "PIN', Cancel / Confirm); confirming sets the lock and returns to Security")
SRC_FINGERPRINT = (_S + "biometrics/fingerprint/FingerprintStatusPreferenceController.java (no print enrolled: "
                   "FingerprintEnrollIntroduction, Cancel / Continue); with no screen lock, Continue opens "
                   "ChooseLockGeneric for a fingerprint backup lock ('Fingerprint + PIN', ..., 'Continue without "
                   "fingerprint'); the sensor touches of FingerprintEnrollEnrolling are not modelled")
SRC_PROFILE_ROWS = (_S + "security/ChangeProfileScreenLockPreferenceController, LockUnificationPreferenceController, "
                    "VisiblePatternProfilePreferenceController, biometrics/*ProfileStatusPreferenceController: "
                    "isAvailable() needs a work profile, which this phone does not have")
SRC_ENCRYPTION = (_S + "security/EncryptionStatusPreferenceController.java: on an encrypted phone the row shows "
                  "'Encrypted' and opens nothing (setFragment(null)); a OnePlus 8 is encrypted (file-based) by default")
SRC_CREDENTIALS_RESET = ("AOSP packages/apps/Settings (Android 11) CredentialStorage.java (action "
                         "com.android.credentials.RESET): a dialog 'Remove all the contents?' with Cancel / OK")
SRC_TRUST_AGENTS = (_S + "security/trustagent/ManageTrustAgentsPreferenceController.java: without a secure "
                    "screen lock the Trust agents row is disabled ('To use, first set a screen lock')")
SRC_SYSTEM_NAV = (_S + "gestures/SystemNavigationGestureSettings.java: getCandidates() offers gesture, 2-button "
                  "and 3-button navigation as radio buttons (the XML is empty); 3-button is the framework default "
                  "(config_navBarInteractionMode 0)")
SRC_ASSUMED_APPS = "assumed: common apps of a OnePlus 8 on OxygenOS 11 (plausible, not read from the APK)"


@dataclass(frozen=True)
class InstalledApp:
    label: str
    package: str
    #: roles it can take in Default apps (browser, dialer, sms, home, assistant, voice_input, camera, ...)
    roles: tuple[str, ...] = ()
    #: pre-installed: App info offers Disable instead of Uninstall
    system: bool = False
    #: permission groups it asks for (its Permissions page)
    permissions: tuple[str, ...] = ()
    #: holds its roles by default (the picker's initial choice)
    default: bool = True
    #: special app access it asks for (keys of SPECIAL_ACCESS values: install_unknown, overlay, ...)
    special: tuple[str, ...] = ()


#: the apps of the simulated phone (an assumption, see SRC_ASSUMED_APPS); A to Z as ManageApplications sorts
INSTALLED_APPS: tuple[InstalledApp, ...] = (
    InstalledApp("Camera", "com.oneplus.camera", ("camera",), True, ("Camera", "Location", "Microphone", "Files and media")),
    InstalledApp("Chrome", "com.android.chrome", ("browser",), True, ("Camera", "Location", "Microphone", "Files and media"),
                 special=("install_unknown",)),
    InstalledApp("Contacts", "com.android.contacts", (), True, ("Contacts", "Phone", "Files and media")),
    InstalledApp("Firefox", "org.mozilla.firefox", ("browser",), False, ("Camera", "Location", "Microphone"),
                 default=False, special=("install_unknown",)),
    InstalledApp("Gallery", "com.oneplus.gallery", ("gallery",), True, ("Location", "Files and media"),
                 special=("all_files",)),
    InstalledApp("Gmail", "com.google.android.gm", ("mail",), True, ("Contacts", "Files and media"),
                 special=("install_unknown",)),
    InstalledApp("Google", "com.google.android.googlequicksearchbox", ("assistant", "voice_input"), True,
                 ("Location", "Microphone"), special=("overlay", "write_settings", "wifi_control")),
    InstalledApp("Messages", "com.google.android.apps.messaging", ("sms",), True, ("Contacts", "Phone", "SMS")),
    InstalledApp("OnePlus Launcher", "net.oneplus.launcher", ("home",), True),
    InstalledApp("Phone", "com.google.android.dialer", ("dialer",), True, ("Contacts", "Microphone", "Phone"),
                 special=("overlay",)),
    InstalledApp("WhatsApp", "com.whatsapp", (), False, ("Camera", "Contacts", "Microphone", "Files and media"),
                 special=("install_unknown", "overlay")),
    InstalledApp("YT Music", "com.google.android.apps.youtube.music", ("music",), True, ("Files and media",)),
)

#: the accounts on the phone (an assumption): (account name, account type label, what it syncs)
ACCOUNTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("alex.example@gmail.com", "Google", ("Calendar", "Contacts", "Drive", "Gmail")),
    ("alex@work.example.com", "Exchange", ("Calendar", "Contacts", "Email")),
)
#: account types the apps provide (Add account)
ACCOUNT_TYPES = ("Exchange", "Google", "Personal (IMAP)", "Personal (POP3)")

#: sound titles by ringtone type (SRC_SOUNDS), the first is the default
SOUNDS: dict[str, tuple[str, ...]] = {
    "ringtone": ("Andromeda", "Aquila", "Argo Navis", "Atria", "Beat Plucker", "Bentley Dubs", "Big Easy",
                 "Bird Loop", "Canis Major", "Carina", "Centaurus", "Cygnus", "Draco", "Eridani", "Hydra",
                 "Lyra", "Orion", "Pegasus", "Perseus", "Rigel"),
    "notification": ("Adara", "Aldebaran", "Altair", "Antares", "Arcturus", "Beat Box Android", "Bellatrix",
                     "Betelgeuse", "Canopus", "Capella", "Castor", "Deneb", "Electra", "Fomalhaut", "Merope",
                     "Polaris", "Pollux", "Procyon", "Spica", "Vega"),
    "alarm": ("Argon", "Barium", "Carbon", "Cesium", "Fermium", "Hassium", "Helium", "Krypton", "Neon",
              "Neptunium", "Nobelium", "Osmium", "Oxygen", "Platinum", "Plutonium", "Promethium", "Scandium"),
}

#: links a fragment makes in code: fragment class (short name) -> (preference XML, source)
CODE_LINKS: dict[str, tuple[str, str]] = {
    "DefaultAppSettings": ("app_default_settings", SRC_DEFAULT_APPS),
    "IccLockSettings": ("sim_lock_settings", SRC_ICC_LOCK),
}

#: rows whose controller opens a screen in code: (screen, element key) -> (target XML, source)
CONTROLLER_LINKS: dict[tuple[str, str], tuple[str, str]] = {
    ("manage_assist", "default_assist"): ("default_assist_settings", SRC_ASSIST),
    ("network_and_internet", "mobile_network_list"): ("mobile_network_settings", SRC_MOBILE_NETWORK),
}

#: picker screens (their XML is an empty PreferenceScreen, or the class builds from layouts):
#: screen XML or picker class -> (role, offers "None", source)
PICKERS: dict[str, tuple[str, bool, str]] = {
    "default_browser_settings": ("browser", False, SRC_PICKER),
    "default_phone_settings": ("dialer", False, SRC_PICKER),
    "default_sms_settings": ("sms", False, SRC_PICKER),
    "default_home_settings": ("home", False, SRC_PICKER),
    "default_assist_settings": ("assistant", True, SRC_PICKER),
    "default_voice_settings": ("voice_input", False, SRC_PICKER),
    "DefaultCameraPicker": ("camera", False, SRC_ONEPLUS_PICKER),
    "DefaultGalleryPicker": ("gallery", False, SRC_ONEPLUS_PICKER),
    "DefaultMusicPicker": ("music", False, SRC_ONEPLUS_PICKER),
    "DefaultMailPicker": ("mail", False, SRC_ONEPLUS_PICKER),
}

#: System navigation's modes, in the picker's order: (radio key, string name, stock title); the last is the default
SYSTEM_NAV_XML = "system_navigation_gesture_settings"
SYSTEM_NAV_MODES = (("system_nav_gestural", "edge_to_edge_navigation_title", "Gesture navigation"),
                    ("system_nav_2buttons", "swipe_up_to_switch_apps_title", "2-button navigation"),
                    ("system_nav_3buttons", "legacy_navigation_title", "3-button navigation"))

#: the screen lock: the Security row, the chooser's XML, the lock types (unlock_set_<mode>: string suffix, stock
#: text; the row key is unlock_set_<mode> except Swipe = unlock_set_none and None = unlock_set_off)
LOCK_ROW_KEY = "unlock_set_or_change"
LOCK_PICKER_XML = "security_settings_picker"
LOCK_SETTING = "screen_lock_type"
LOCK_MODES = (("off", "None"), ("none", "Swipe"), ("pattern", "Pattern"), ("pin", "PIN"), ("password", "Password"))

#: Security rows: Fingerprint (no print enrolled), the work-profile section (no work profile), encryption status
FINGERPRINT_ROW_KEY = "fingerprint_settings"
WORK_PROFILE_HEADER = "security_category_profile"
WORK_PROFILE_ROWS = ("unification", "unlock_set_or_change_profile", "visiblepattern_profile",
                     "fingerprint_settings_profile", "face_settings_profile")
ENCRYPTION_ROW_KEY = "encryption_and_credentials_encryption_status"
CREDENTIALS_RESET_KEY = "credentials_reset"
TRUST_AGENTS_KEY = "manage_trust_agents"

#: pages whose on/off switch bar is drawn from a layout: screen -> the key of the switch row that opens it
SWITCH_BARS: dict[str, str] = {"wifi_settings": "main_toggle_wifi", "bluetooth_screen": "bluetooth_settings"}
#: pages whose fragment draws an on/off bar for a setting that no row shows as a switch:
#: screen -> (key, title string, stock title, on by default, source)
OWN_SWITCH_BARS: dict[str, tuple[str, str, str, bool, str]] = {
    "location_settings": ("location_switch_bar", "location_settings_master_switch_title", "Use location", True,
                          _S + "location/LocationSwitchBarController.java on LocationSettings: the 'Use location' bar"),
    "wifi_tether_settings": ("wifi_tether_switch_bar", "wifi_hotspot_checkbox_text", "Wi\u2011Fi hotspot", False,
                             _S + "wifi/tether/WifiTetherSwitchBarController.java on WifiTetherSettings: the "
                             "hotspot's on/off bar"),
}

#: special app access rows (ManageApplications list types): element key -> (per-app detail XML, access)
SPECIAL_ACCESS: dict[str, tuple[str, str]] = {
    "manage_external_sources": ("external_sources_details", "install_unknown"),
    "system_alert_window_app_list": ("draw_overlay_permissions_details", "overlay"),
    "write_settings_apps": ("write_system_settings_permissions_details", "write_settings"),
    "manage_external_storage": ("manage_external_storage_permission_details", "all_files"),
    "change_wifi_state": ("change_wifi_state_details", "wifi_control"),
}

#: runtime permission groups of Android 11, in the Permission manager's order
PERMISSION_GROUPS = ("Body sensors", "Calendar", "Call logs", "Camera", "Contacts", "Files and media", "Location",
                     "Microphone", "Phone", "Physical activity", "SMS")

#: the choices of one app's permission page, first = what the app holds; other groups: Allow, Deny
PERMISSION_CHOICES: dict[str, tuple[str, ...]] = {
    "Location": ("Allow only while using the app", "Allow all the time", "Ask every time", "Deny"),
    "Camera": ("Allow only while using the app", "Ask every time", "Deny"),
    "Microphone": ("Allow only while using the app", "Ask every time", "Deny"),
}

#: App info rows a controller shows only in cases this phone does not have (role holders,
#: instant apps, work profiles, apps with their own settings activity, developer memory stats)
_APP_INFO_HIDDEN = {"default_home", "default_browser", "default_phone_app", "default_emergency_app",
                    "default_sms_app", "instant_app_launch_supported_domain_urls", "interact_across_profiles",
                    "memory", "app_settings_link", "time_spent_in_app"}
#: App info rows -> the per-app page they open (XML cloned per app); permission_settings opens a built page
_APP_PAGES = {"notification_settings": "app_notification_settings", "storage_settings": "app_storage_settings",
              "data_settings": "app_data_usage", "battery": "power_usage_detail",
              "preferred_settings": "installed_app_launch_settings"}


def app_slug(package: str) -> str:
    return re.sub(r"\W", "_", package)


# ------------------------------------------------------------------ entry point

def add_code_built_screens(uimap: UIMap, strings: "StringTable") -> None:
    """Attach screens built from AOSP behaviour to the links the resources leave open, and fill empty screens."""
    _Builder(uimap, strings).run()


class _Builder:
    def __init__(self, uimap: UIMap, strings: "StringTable"):
        self.map = uimap
        self.strings = strings

    def text(self, name: str, fallback: str) -> str:
        """The APK's English string ``name``, or the stock AOSP text when the decode lacks it."""
        return self.strings.plain(name) or fallback

    def run(self) -> None:
        self.code_links()
        self.switch_bars()
        self.pickers()
        self.system_navigation()
        self.ringtones()
        self.accounts()
        self.printing()
        self.apps()
        self.special_access()
        self.permission_manager()
        self.screen_lock()
        self.fingerprint()
        self.security_rows()

    # -- helpers

    def attach(self, screen_id: str, el: MapElement, target: str, source: str) -> None:
        """Point ``el`` at ``target`` and move its link from unresolved to built."""
        was = el.unresolved or "no link in the resources (a controller opens it in code)"
        el.target, el.unresolved, el.built_from = target, None, source
        if el.kind == "pref":
            el.kind = "link"
        self.map.unresolved = [u for u in self.map.unresolved
                               if not (u.screen == screen_id and u.element == el.title)]
        self.map.built_links.append(Unresolved(screen=screen_id, element=el.title, target=was, reason=source))

    def new_screen(self, screen_id: str, title: str, source: str, elements: list[MapElement]) -> MapScreen:
        screen = MapScreen(id=screen_id, title=title, source=f"built: {source}", elements=elements,
                           built_from=source)
        self.map.screens[screen_id] = screen
        return screen

    def fill(self, screen: MapScreen, elements: list[MapElement], source: str, at: Optional[int] = None) -> None:
        """Add built elements to an existing (often empty) XML screen."""
        if at is None:
            screen.elements.extend(elements)
        else:
            screen.elements[at:at] = elements
        if not screen.built_from:
            screen.source = f"{screen.source} + built: {source}"
        screen.built_from = source

    def unresolved_elements(self, fragment: str) -> list[tuple[MapScreen, MapElement]]:
        """(screen, element) of every unresolved link whose target class is ``fragment``."""
        out = []
        for u in list(self.map.unresolved):
            if _target_class(u.target) != fragment:
                continue
            screen = self.map.screens.get(u.screen)
            el = next((e for e in screen.elements if e.title == u.element and e.unresolved), None) if screen else None
            if el is not None:
                out.append((screen, el))
        return out

    # -- links made in code

    def code_links(self) -> None:
        for fragment, (xml, source) in CODE_LINKS.items():
            if xml not in self.map.screens:
                continue
            for screen, el in self.unresolved_elements(fragment):
                self.attach(screen.id, el, xml, source)
        for (sid, key), (xml, source) in CONTROLLER_LINKS.items():
            screen = self.map.screens.get(sid)
            el = next((e for e in screen.elements if e.key == key), None) if screen else None
            if el is not None and not el.target and xml in self.map.screens:
                self.attach(sid, el, xml, source)

    # -- switch bars

    def switch_bars(self) -> None:
        for sid, key in SWITCH_BARS.items():
            page = self.map.screens.get(sid)
            row = next((el for s in self.map.screens.values() for el in s.elements
                        if el.key == key and el.kind == "switch" and el.target == sid), None)
            if page is None or row is None or any(el.key == key for el in page.elements):
                continue
            bar = MapElement(key=key, kind="switch", title=row.title, widget="SwitchBar", built_from=SRC_SWITCH_BAR)
            self.fill(page, [bar], SRC_SWITCH_BAR, 0)
        for sid, (key, name, stock, on, source) in OWN_SWITCH_BARS.items():
            page = self.map.screens.get(sid)
            if page is None or any(el.key == key for el in page.elements):
                continue
            bar = MapElement(key=key, kind="switch", title=self.text(name, stock), widget="SwitchBar", default=on,
                             built_from=source)
            self.fill(page, [bar], source, 0)

    # -- Default apps pickers

    def choices(self, role: str, with_none: bool, group: str) -> list[MapElement]:
        apps = [a for a in INSTALLED_APPS if role in a.roles]
        out = []
        if with_none:
            out.append(MapElement(key=f"{group}.none", kind="radio", title=self.text("app_list_preference_none",
                                                                                      "None"),
                                  category=group, built_from=SRC_PICKER, default=not apps))
        holder = next((a for a in apps if a.default), None)
        for app in apps:
            out.append(MapElement(key=f"{group}.{app_slug(app.package)}", kind="radio", title=app.label,
                                  category=group, built_from=SRC_ASSUMED_APPS, default=app is holder))
        return out

    def pickers(self) -> None:
        for name, (role, with_none, source) in PICKERS.items():
            if name in self.map.screens:
                screen = self.map.screens[name]
                if not any(e.kind == "radio" for e in screen.elements):
                    self.fill(screen, self.choices(role, with_none, name), source)
                continue
            for screen, el in self.unresolved_elements(name):
                sid = f"picker__{role}"
                if sid not in self.map.screens:
                    self.new_screen(sid, el.title, source, self.choices(role, with_none, sid))
                self.attach(screen.id, el, sid, source)

    def system_navigation(self) -> None:
        """System navigation: one radio button per navigation mode (the screen's XML is empty)."""
        screen = self.map.screens.get(SYSTEM_NAV_XML)
        if screen is None or any(e.kind == "radio" for e in screen.elements):
            return
        default = SYSTEM_NAV_MODES[-1][0]
        modes = [MapElement(key=key, kind="radio", title=self.text(name, stock), category=SYSTEM_NAV_XML,
                            built_from=SRC_SYSTEM_NAV, default=key == default)
                 for key, name, stock in SYSTEM_NAV_MODES]
        self.fill(screen, modes, SRC_SYSTEM_NAV)

    # -- ringtone pickers

    def ringtones(self) -> None:
        titles = {"ringtone": self.text("ringtone_title", "Phone ringtone"),
                  "notification": self.text("notification_ringtone_title", "Default notification sound"),
                  "alarm": self.text("alarm_ringtone_title", "Default alarm sound")}
        for screen in list(self.map.screens.values()):
            for el in screen.elements:
                kind = el.ringtone_type
                if not kind or el.target or kind not in SOUNDS:
                    continue
                if el.key.startswith("work_"):
                    continue  # work-profile sounds: this phone has no work profile (the rows stay greyed out)
                # the default sounds are one setting per type, wherever a row shows them; a vendor
                # row (OnePlus SMS ringtone) keeps its own
                shared = el.widget == "DefaultRingtonePreference"
                sid = f"ringtone_picker__{kind}" if shared else f"ringtone_picker__{el.key}"
                source = SRC_RINGTONE if shared else f"{el.widget} (vendor), shown as {SRC_RINGTONE.split(_S, 1)[-1]}"
                if sid not in self.map.screens:
                    group = sid
                    none = MapElement(key=f"{group}.none", kind="radio", category=group, built_from=SRC_RINGTONE,
                                      title=self.text("app_list_preference_none", "None"))
                    sounds = [MapElement(key=f"{group}.{i}", kind="radio", title=t, category=group,
                                         built_from=SRC_SOUNDS, default=i == 0)
                              for i, t in enumerate(SOUNDS[kind])]
                    self.new_screen(sid, titles[kind] if shared else el.title, source, [none, *sounds])
                if el.summary.strip() in ("", "%s"):
                    el.summary = ""
                self.attach(screen.id, el, sid, source)

    # -- accounts

    def accounts(self) -> None:
        dashboard = self.map.screens.get("accounts_dashboard_settings")
        detail = self.map.screens.get("account_type_settings")
        if dashboard is None or detail is None:
            return
        rows = []
        for i, (name, kind, synced) in enumerate(ACCOUNTS):
            sid = f"account_type_settings__{i}"
            page = copy.deepcopy(detail)
            page.id, page.title, page.source = sid, kind, f"{detail.source} copied for account {i}; built: " \
                                                          f"{SRC_ACCOUNT_DETAIL}"
            page.built_from = SRC_ACCOUNT_DETAIL
            page.elements = _prefixed(page.elements, f"account{i}")
            sync_id = f"account_sync_settings__{i}"
            sync_title = self.text("account_sync_title", "Account sync")
            switches = [MapElement(key=f"account{i}.sync.{app_slug(t)}", kind="switch", title=t, default=True,
                                   built_from=SRC_ACCOUNT_SYNC) for t in synced]
            self.new_screen(sync_id, sync_title, SRC_ACCOUNT_SYNC, switches)
            for el in page.elements:
                if el.key.endswith("account_sync"):
                    el.kind, el.target, el.built_from = "link", sync_id, SRC_ACCOUNT_SYNC
            remove = self.text("remove_account_label", "Remove account")
            page.elements.append(MapElement(
                key=f"account{i}.remove_account", kind="button", title=remove, built_from=SRC_ACCOUNT_DETAIL,
                confirm={"title": self.text("really_remove_account_title", "Remove account?"),
                         "message": self.text("really_remove_account_message", "Removing this account will "
                                              "delete all of its messages, contacts, and other data from the phone!"),
                         "button": remove}))
            self.map.screens[sid] = page
            rows.append(MapElement(key=f"account{i}", kind="link", title=name, summary=kind, target=sid,
                                   built_from=SRC_ACCOUNTS))
        add = MapElement(key="add_account", kind="link", title=self.text("add_account_label", "Add account"),
                         built_from=SRC_ACCOUNTS)
        chooser = self.map.screens.get("add_account_settings")
        if chooser is not None:
            self.fill(chooser, [MapElement(key=f"add_account.{app_slug(t)}", kind="pref", title=t,
                                           built_from=SRC_ADD_ACCOUNT) for t in ACCOUNT_TYPES], SRC_ADD_ACCOUNT, 0)
            add.target = chooser.id
        rows.append(add)
        self.fill(dashboard, rows, SRC_ACCOUNTS, 0)
        for row in rows:
            self.map.built_links.append(Unresolved(screen=dashboard.id, element=row.title,
                                                   target="a row AccountPreferenceController adds in code",
                                                   reason=SRC_ACCOUNTS))

    # -- printing

    def printing(self) -> None:
        screen = self.map.screens.get("print_settings")
        if screen is None or any(e.built_from for e in screen.elements):
            return
        service = "Default Print Service"
        page_id = "print_service_settings__default"
        switch = MapElement(key="print_service_default_enabled", kind="switch",
                            title=self.text("print_service_use", "Use print service"), default=True,
                            built_from=SRC_PRINT)
        searching = MapElement(key="print_service_default.searching", kind="text",
                               title=self.text("print_searching_for_printers", "Searching for printers"),
                               selectable=False, built_from=SRC_PRINT)
        self.new_screen(page_id, service, SRC_PRINT, [switch, searching])
        row = MapElement(key="print_service_default", kind="link", title=service, target=page_id,
                         built_from=SRC_PRINT, summary_on=self.text("print_feature_state_on", "On"),
                         summary_off=self.text("print_feature_state_off", "Off"))
        add = MapElement(key="print_add_service", kind="pref",
                         title=self.text("print_menu_item_add_service", "Add service"), built_from=SRC_PRINT)
        header = MapElement(key="print_services_category", kind="header", selectable=False, built_from=SRC_PRINT,
                            title=self.text("print_settings_title", "Print services"))
        header.category = header.title
        row.category = add.category = header.title
        self.fill(screen, [header, row, add], SRC_PRINT)
        self.map.built_links.append(Unresolved(screen=screen.id, element=service,
                                               target="a row PrintSettingsFragment adds in code", reason=SRC_PRINT))

    # -- the app list and each app's pages

    def apps(self) -> None:
        info = self.map.screens.get("app_info_settings")
        if info is None:
            return
        apps = list(INSTALLED_APPS)
        for app in apps:
            self.app_pages(app, info)
        list_id = "manage_applications__all"
        links = self.unresolved_elements("ManageApplications")
        all_apps = next((el for _, el in links if el.key == "all_app_info"), None)
        notif = next((el for _, el in links if el.key == "all_notifications"), None)
        title = all_apps.title if all_apps else self.text("applications_settings", "App info")
        rows = [MapElement(key=f"apps.{app_slug(a.package)}", kind="link", title=a.label,
                           target=f"app_info_settings__{app_slug(a.package)}", built_from=SRC_APP_LIST)
                for a in apps]
        self.new_screen(list_id, title, SRC_APP_LIST, rows)
        notif_id = "manage_applications__notifications"
        notif_rows = [MapElement(key=f"{app_slug(a.package)}.notifications_enabled", kind="switch", title=a.label,
                                 default=True, target=f"app_notification_settings__{app_slug(a.package)}",
                                 built_from=SRC_APP_NOTIF_LIST)
                      for a in apps]
        self.new_screen(notif_id, notif.title if notif else self.text("notifications_title", "Notifications"),
                        SRC_APP_NOTIF_LIST, notif_rows)
        for screen, el in links:
            if el is all_apps:
                self.attach(screen.id, el, list_id, SRC_APP_LIST)
            elif el is notif:
                self.attach(screen.id, el, notif_id, SRC_APP_NOTIF_LIST)

    def app_pages(self, app: InstalledApp, info: MapScreen) -> None:
        slug = app_slug(app.package)
        page = self.clone(info, slug, self.text("applications_settings", "App info"), SRC_APP_INFO)
        page.elements = [e for e in page.elements if e.key.split(":", 1)[-1] not in _APP_INFO_HIDDEN]
        header = MapElement(key=f"{slug}:app_label", kind="text", title=app.label, selectable=False,
                            built_from=SRC_APP_INFO)
        buttons = [MapElement(key=f"{slug}:open", kind="button", title=self.text("launch_instant_app", "Open"),
                              built_from=SRC_APP_INFO)]
        if app.system:
            buttons.append(MapElement(
                key=f"{slug}:disable", kind="button", title=self.text("disable_text", "Disable"),
                built_from=SRC_APP_INFO,
                confirm={"title": "", "message": self.text("app_disable_dlg_text", "If you disable this app, "
                                                           "Android and other apps may no longer function as intended."),
                         "button": self.text("app_disable_dlg_positive", "Disable app")}))
        else:
            buttons.append(MapElement(
                key=f"{slug}:uninstall", kind="button", title=self.text("uninstall_text", "Uninstall"),
                built_from=SRC_APP_INFO,
                confirm={"title": app.label, "message": "Do you want to uninstall this app?", "button": "OK"}))
        buttons.append(MapElement(
            key=f"{slug}:force_stop", kind="button", title=self.text("force_stop", "Force stop"),
            built_from=SRC_APP_INFO,
            confirm={"title": self.text("force_stop_dlg_title", "Force stop?"),
                     "message": self.text("force_stop_dlg_text", "If you force stop an app, it may misbehave."),
                     "button": "OK"}))
        page.elements[0:0] = [header, *buttons]
        for el in page.elements:
            base = el.key.split(":", 1)[-1]
            if base in _APP_PAGES and _APP_PAGES[base] in self.map.screens:
                target = self.app_page(app, _APP_PAGES[base], el.title)
                el.kind, el.target, el.built_from = "link", target, SRC_APP_ROWS
            elif base == "permission_settings":
                el.kind, el.target, el.built_from = "link", self.permissions_page(app, el.title), SRC_PERMISSIONS
            if el.summary.strip() == "%s" or el.summary.strip() == "…":
                el.summary = ""
        self.map.screens[page.id] = page

    def clone(self, screen: MapScreen, slug: str, title: str, source: str) -> MapScreen:
        page = copy.deepcopy(screen)
        page.id = f"{screen.id}__{slug}"
        page.title = screen.title or title
        page.source = f"{screen.source} copied for {slug}; built: {source}"
        page.built_from = source
        page.elements = _prefixed(page.elements, slug)
        return page

    def app_page(self, app: InstalledApp, xml: str, title: str) -> str:
        slug = app_slug(app.package)
        page = self.clone(self.map.screens[xml], slug, title, SRC_APP_ROWS)
        if xml == "app_notification_settings":
            label = self.text("notification_switch_label", 'All "%s" notifications').replace("%s", app.label)
            switch = MapElement(key=f"{slug}.notifications_enabled", kind="switch", title=label, default=True,
                                built_from=SRC_APP_NOTIF)
            for el in page.elements:
                if el.kind != "header" and not el.dependency:
                    el.dependency = switch.key  # AOSP hides the rest while the app's notifications are off
            page.elements.insert(0, switch)
            page.built_from = SRC_APP_NOTIF
        elif xml == "app_storage_settings":
            clear_storage = MapElement(
                key=f"{slug}:clear_storage", kind="button", title=self.text("clear_user_data_text", "Clear storage"),
                built_from=SRC_APP_STORAGE,
                confirm={"title": self.text("clear_data_dlg_title", "Delete app data?"),
                         "message": self.text("clear_data_dlg_text", "All this app's data will be deleted "
                                              "permanently."),
                         "button": "OK"})
            clear_cache = MapElement(key=f"{slug}:clear_cache", kind="button",
                                     title=self.text("clear_cache_btn_text", "Clear cache"), built_from=SRC_APP_STORAGE)
            page.elements[0:0] = [clear_storage, clear_cache]
            page.built_from = SRC_APP_STORAGE
        for el in page.elements:
            if el.summary.strip() == "%s":
                el.summary = ""
        self.map.screens[page.id] = page
        return page.id

    def permissions_page(self, app: InstalledApp, title: str) -> str:
        """The app's permission groups, each showing its current choice and opening it."""
        slug = app_slug(app.package)
        sid = f"app_permissions__{slug}"
        elements: list[MapElement] = []
        for group in app.permissions:
            elements.append(MapElement(key=f"{slug}:perm.{app_slug(group.lower())}", kind="link", title=group,
                                       target=self.permission_page(app, group), built_from=SRC_PERMISSIONS))
        if not elements:
            elements.append(MapElement(key=f"{slug}:no_permissions", kind="text", selectable=False,
                                       title="No permissions requested", built_from=SRC_PERMISSIONS))
        self.new_screen(sid, title, SRC_PERMISSIONS, elements)
        return sid

    def permission_page(self, app: InstalledApp, group: str) -> str:
        """One app's choice for one permission group (AppPermissionFragment)."""
        sid = f"app_permission__{app_slug(app.package)}__{app_slug(group.lower())}"
        if sid not in self.map.screens:
            choices = PERMISSION_CHOICES.get(group, ("Allow", "Deny"))
            radios = [MapElement(key=f"{sid}.{i}", kind="radio", title=c, category=sid, default=i == 0,
                                 built_from=SRC_APP_PERMISSION) for i, c in enumerate(choices)]
            self.new_screen(sid, f"{group} permission", SRC_APP_PERMISSION, radios)
        return sid

    # -- special app access and the permission manager

    def special_access(self) -> None:
        allowed = self.text("app_permission_summary_allowed", "Allowed")
        denied = self.text("app_permission_summary_not_allowed", "Not allowed")
        for screen, el in self.unresolved_elements("ManageApplications"):
            if el.key not in SPECIAL_ACCESS or SPECIAL_ACCESS[el.key][0] not in self.map.screens:
                continue
            xml, access = SPECIAL_ACCESS[el.key]
            rows = []
            for app in INSTALLED_APPS:
                if access not in app.special:
                    continue
                detail = self.clone(self.map.screens[xml], app_slug(app.package), el.title, SRC_SPECIAL_ACCESS)
                self.map.screens[detail.id] = detail
                rows.append(MapElement(key=f"{el.key}.{app_slug(app.package)}", kind="link", title=app.label,
                                       target=detail.id, built_from=SRC_SPECIAL_ACCESS, summary_on=allowed,
                                       summary_off=denied))
            list_id = f"manage_applications__{el.key}"
            self.new_screen(list_id, el.title, SRC_SPECIAL_ACCESS, rows)
            self.attach(screen.id, el, list_id, SRC_SPECIAL_ACCESS)

    def permission_manager(self) -> None:
        managers = self.unresolved_elements("MANAGE_PERMISSIONS")
        location = self.unresolved_elements("MANAGE_PERMISSION_APPS")
        if not managers and not location:
            return  # nothing in this APK opens it
        pages = {}
        for group in PERMISSION_GROUPS:
            apps = [a for a in INSTALLED_APPS if group in a.permissions]
            sid = f"permission_apps__{app_slug(group.lower())}"
            if apps:
                # each app shows its current choice (AOSP sorts them under Allowed / Denied; a fixed
                # list with the choice as summary keeps the world's state space small)
                elements = [MapElement(key=f"{sid}.{app_slug(a.package)}", kind="link", title=a.label,
                                       built_from=SRC_PERMISSION_MANAGER, target=self.permission_page(a, group))
                            for a in apps]
            else:
                elements = [MapElement(key=f"{sid}.none", kind="text", title="No apps", selectable=False,
                                       built_from=SRC_PERMISSION_MANAGER)]
            self.new_screen(sid, group, SRC_PERMISSION_MANAGER, elements)
            pages[group] = (sid, len(apps))
        rows = [MapElement(key=f"permission_manager.{app_slug(g.lower())}", kind="link", title=g, target=sid,
                           built_from=SRC_PERMISSION_MANAGER) for g, (sid, _) in pages.items()]
        manager_id = "permission_manager"
        title = self.text("app_permissions", "Permission manager")
        self.new_screen(manager_id, title, SRC_PERMISSION_MANAGER, rows)
        for screen, el in managers:
            self.attach(screen.id, el, manager_id, SRC_PERMISSION_MANAGER)
        for screen, el in location:
            self.attach(screen.id, el, pages["Location"][0], SRC_PERMISSION_MANAGER)


    # -- screen lock

    def screen_lock(self) -> None:
        """Security > Screen lock opens the lock chooser; PIN, Password and Pattern go through a setup screen."""
        picker = self.map.screens.get(LOCK_PICKER_XML)
        where = next(((s, el) for s in self.map.screens.values() for el in s.elements
                      if el.key == LOCK_ROW_KEY and not el.target), None)
        if picker is None or where is None:
            return
        names = {mode: self.text(f"unlock_set_unlock_mode_{mode}", fallback) for mode, fallback in LOCK_MODES}
        self.map.choice_settings[LOCK_SETTING] = {"options": list(names.values()), "initial": names["none"],
                                                  "description": f"the screen lock type: {SRC_LOCK_PICKER}"}
        screen, row = where
        self.attach(screen.id, row, picker.id, SRC_SCREEN_LOCK)
        row.shows, row.summary = LOCK_SETTING, ""
        kept = []
        for el in picker.elements:
            mode = el.key.removeprefix("unlock_set_")
            if mode not in names:
                continue  # the skip rows of the fingerprint and face setups
            if mode in ("off", "none"):
                el.sets, el.closes = (LOCK_SETTING, names[mode]), 1
            else:
                el.kind, el.target = "link", self.lock_setup(mode, names[mode])
            el.built_from = SRC_LOCK_PICKER
            kept.append(el)
        picker.elements = kept
        self.fill(picker, [], SRC_LOCK_PICKER)

    def lock_setup(self, mode: str, name: str, purpose: str = "", opened_over: int = 1) -> str:
        """ChooseLockPassword / ChooseLockPattern: enter, Next, enter again, Confirm.

        ``purpose`` "fingerprint" is the backup lock of a fingerprint setup (its own header);
        ``opened_over`` is how many screens opened on the way (Confirm closes them all).
        """
        sid = f"choose_lock_{mode}" + (f"__{purpose}" if purpose else "")
        confirm_id = f"{sid}__confirm"
        if purpose:
            header = self.text(f"lockpassword_choose_your_{mode}_header_for_{purpose}",
                               f"To use {purpose}, set {name}")
        else:
            header = self.text("lockpassword_choose_your_screen_lock_header", "Set screen lock")
        if mode == "pattern":
            intro = self.text("lockpattern_recording_intro_header", "Draw an unlock pattern")
            again = self.text("lockpattern_need_to_confirm", "Draw pattern again to confirm")
        else:
            intro = self.text(f"lockpassword_choose_your_{mode}_message", f"For security, set {name}")
            again = self.text(f"lockpassword_confirm_your_{mode}_header", f"Re-enter your {name}")
        cancel = self.text("lockpassword_cancel_label", "Cancel")

        def button(key: str, title: str, **how) -> MapElement:
            return MapElement(key=key, kind="button", title=title, built_from=SRC_LOCK_SETUP, **how)

        self.new_screen(confirm_id, header, SRC_LOCK_SETUP, [
            MapElement(key=f"{confirm_id}.header", kind="text", title=again, selectable=False,
                       built_from=SRC_LOCK_SETUP),
            MapElement(key=f"{confirm_id}.entry", kind="input", title=name, built_from=SRC_LOCK_SETUP),
            button(f"{confirm_id}.cancel", cancel, closes=2),
            button(f"{confirm_id}.confirm", self.text("lockpassword_confirm_label", "Confirm"),
                   sets=(LOCK_SETTING, name), closes=opened_over + 2)])
        self.new_screen(sid, header, SRC_LOCK_SETUP, [
            MapElement(key=f"{sid}.header", kind="text", title=intro, selectable=False, built_from=SRC_LOCK_SETUP),
            MapElement(key=f"{sid}.entry", kind="input", title=name, built_from=SRC_LOCK_SETUP),
            button(f"{sid}.cancel", cancel, closes=1),
            button(f"{sid}.next", self.text("next_label", "Next"), target=confirm_id)])
        return sid


    def fingerprint(self) -> None:
        """Security > Fingerprint with no print enrolled: the introduction, then a backup screen lock."""
        picker = self.map.screens.get(LOCK_PICKER_XML)
        where = next(((s, el) for s in self.map.screens.values() for el in s.elements
                      if el.key == FINGERPRINT_ROW_KEY and not el.target), None)
        if picker is None or where is None or LOCK_SETTING not in self.map.choice_settings:
            return
        names = {mode: self.text(f"unlock_set_unlock_mode_{mode}", fallback) for mode, fallback in LOCK_MODES}
        rows = [MapElement(key="fingerprint_lock.message", kind="text", selectable=False, built_from=SRC_FINGERPRINT,
                           title=self.text("lock_settings_picker_fingerprint_message",
                                           "Choose your backup screen lock method"))]
        for mode in ("pattern", "pin", "password"):
            title = self.text(f"fingerprint_unlock_set_unlock_{mode}", f"Fingerprint + {names[mode]}")
            rows.append(MapElement(key=f"fingerprint_lock.{mode}", kind="link", title=title, built_from=SRC_FINGERPRINT,
                                   target=self.lock_setup(mode, names[mode], "fingerprint", opened_over=2)))
        rows.append(MapElement(key="fingerprint_lock.skip", kind="pref", closes=2, built_from=SRC_FINGERPRINT,
                               title=self.text("fingerprint_unlock_skip_fingerprint", "Continue without fingerprint")))
        chooser = "fingerprint_choose_lock"
        self.new_screen(chooser, picker.title, SRC_FINGERPRINT, rows)
        intro = "fingerprint_enroll_introduction"
        self.new_screen(intro, self.text("security_settings_fingerprint_enroll_introduction_title",
                                         "Unlock with fingerprint"), SRC_FINGERPRINT, [
            MapElement(key="fingerprint_intro.message", kind="text", selectable=False, built_from=SRC_FINGERPRINT,
                       title=self.text("security_settings_fingerprint_enroll_introduction_message",
                                       "Just touch the fingerprint sensor to unlock your phone.")),
            MapElement(key="fingerprint_intro.cancel", kind="button", closes=1, built_from=SRC_FINGERPRINT,
                       title=self.text("security_settings_fingerprint_enroll_introduction_cancel", "Cancel")),
            MapElement(key="fingerprint_intro.continue", kind="button", target=chooser, built_from=SRC_FINGERPRINT,
                       title=self.text("security_settings_fingerprint_enroll_introduction_continue", "Continue"))])
        screen, row = where
        self.attach(screen.id, row, intro, SRC_FINGERPRINT)
        if row.summary.strip() in ("%s", "…"):
            row.summary = ""

    def security_rows(self) -> None:
        """Rows of Security that AOSP controllers hide or make inert on this phone."""
        for screen in self.map.screens.values():
            if "__" in screen.id:
                continue  # per-app copies and built screens
            before = len(screen.elements)
            screen.elements = [e for e in screen.elements
                               if e.key not in WORK_PROFILE_ROWS and e.key != WORK_PROFILE_HEADER]
            if len(screen.elements) < before:
                self.fill(screen, [], SRC_PROFILE_ROWS)
            for el in screen.elements:
                if el.key == ENCRYPTION_ROW_KEY and el.unresolved:
                    el.unresolved, el.kind, el.selectable, el.built_from = None, "pref", False, SRC_ENCRYPTION
                    el.summary = self.text("crypt_keeper_encrypted_summary", "Encrypted")
                    self.map.unresolved = [u for u in self.map.unresolved
                                           if not (u.screen == screen.id and u.element == el.title)]
                    self.fill(screen, [], SRC_ENCRYPTION)
                elif el.key == TRUST_AGENTS_KEY and LOCK_SETTING in self.map.choice_settings:
                    secure = tuple(self.text(f"unlock_set_unlock_mode_{m}", f) for m, f in LOCK_MODES
                                   if m not in ("off", "none"))
                    el.enabled_when, el.built_from = (LOCK_SETTING, secure), SRC_TRUST_AGENTS
                    self.fill(screen, [], SRC_TRUST_AGENTS)
                elif el.key == CREDENTIALS_RESET_KEY and el.unresolved:
                    self.attach(screen.id, el, "", SRC_CREDENTIALS_RESET)
                    el.target, el.kind = None, "pref"
                    el.confirm = {"title": "", "message": self.text("credentials_reset_hint", "Remove all the contents?"),
                                  "button": "OK"}


def _target_class(described: str) -> str:
    """The fragment class (short name) an Unresolved's target names: 'a.b.Foo', 'ACTION -> Foo', 'X$Foo'."""
    last = described.rsplit("->", 1)[-1].strip()
    return last.rsplit(".", 1)[-1]


def _prefixed(elements: list[MapElement], prefix: str) -> list[MapElement]:
    """Copies of ``elements`` whose keys (and switch dependencies) are unique to one app or account."""
    out = []
    for el in elements:
        el = copy.copy(el)
        el.key = f"{prefix}:{el.key}"
        if el.dependency:
            el.dependency = f"{prefix}:{el.dependency}"
        out.append(el)
    return out
